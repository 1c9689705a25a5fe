package schedhttp_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/jobkit/jobkit/internal/testkit"
	"github.com/jobkit/jobkit/sched/schedhttp"
)

// faultyHandler is a slog.Handler whose Handle panics (with nil too) or
// calls runtime.Goexit.
type faultyHandler struct{ how string }

func (faultyHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h faultyHandler) Handle(context.Context, slog.Record) error {
	switch h.how {
	case "panic":
		panic("log handler broke")
	case "panic(nil)":
		panic(testkit.NilValue())
	}
	runtime.Goexit()
	return nil
}

func (h faultyHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h faultyHandler) WithGroup(string) slog.Handler      { return h }

// A Logger whose handler panics or calls runtime.Goexit loses its record,
// and nothing else: the request is answered. Before, the record of a write,
// logged after the write and before the answer, took the request's
// goroutine down with it: the entries were deleted or retried, and the
// client got no answer (net/http closes the connection), so that it could
// not tell and might send the write again; a record of a payload not
// encoded cut a listing off mid-document.
func TestAFaultyLoggerLosesOnlyItsRecord(t *testing.T) {
	for _, how := range []string{"panic", "panic(nil)", "Goexit"} {
		t.Run(how, func(t *testing.T) {
			run(t, func(t *testing.T, f *fixture) {
				h := newHandler(t, f.s.Inspector(), schedhttp.Options{
					AllowWrites: true, Logger: slog.New(faultyHandler{how}),
				})
				for _, c := range []struct {
					method, target, says string
				}{
					{"POST", "/delete?queue=names", `{"deleted":6}`},
					{"POST", "/retry?queue=fails", `{"retried":3}`},
					{"POST", "/queues/ints/resume", `"paused":false`},
					{"DELETE", "/entries/orders/1", `{"deleted":1}`},
					{"POST", "/entries/orders/2/disable", `"disabled":true`},
					{"GET", "/entries?queue=odd&payloads=true", `"next":""`},
					{"GET", "/entries/odd/2", `"payloadError"`},
				} {
					w := httptest.NewRecorder()
					served := make(chan bool)
					go func() { // the request's goroutine, as net/http's
						defer close(served)
						defer func() { _ = recover() }()
						h.ServeHTTP(w, httptest.NewRequest(c.method, c.target, nil))
						served <- true
					}()
					if !<-served {
						t.Errorf("%s %s with a Logger that calls %s: the request's goroutine ended without an answer (%d %q)", c.method, c.target, how, w.Code, w.Body)
						continue
					}
					if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), c.says) {
						t.Errorf("%s %s: %d %s, want 200 and %s", c.method, c.target, w.Code, w.Body, c.says)
					}
				}
			})
		})
	}
}
