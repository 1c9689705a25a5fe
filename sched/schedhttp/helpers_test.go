package schedhttp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/internal/logbuf"
	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
	"github.com/jobkit/jobkit/sched/schedhttp"
)

// order is a struct payload, keyed by its ID.
type order struct {
	ID   int    `json:"id"`
	Item string `json:"item"`
}

// odd is a payload keyed by N whose V may not encode.
type odd struct {
	N int
	V any
}

// panicky panics when encoded.
type panicky struct{}

func (panicky) MarshalJSON() ([]byte, error) { panic("boom") }

// failing fails to encode.
type failing struct{}

func (failing) MarshalJSON() ([]byte, error) { return nil, errors.New("no JSON for you") }

// garbage encodes as invalid JSON.
type garbage struct{}

func (garbage) MarshalJSON() ([]byte, error) { return []byte("{nope"), nil }

// fixture is a running scheduler in a synctest bubble, with:
//   - ints (int payloads and keys): 30 pending entries, paused;
//   - names (string): alpha, beta, gamma at t0+1h, user-1..3 at t0+2h, paused;
//   - orders (struct, int keys): 2 pending at t0, one delayed by 1000h, paused;
//   - fails (string): 3 entries failed permanently at t0;
//   - odd: payloads that cannot all be encoded, paused;
//
// and a read-only and a read-write handler on its Inspector.
type fixture struct {
	s      *sched.Scheduler
	ints   *sched.Queue[int, int]
	names  *sched.Queue[string, string]
	orders *sched.Queue[order, int]
	fails  *sched.Queue[string, string]
	odd    *sched.Queue[odd, int]
	t0     time.Time
	ro, rw *schedhttp.Handler
	log    *logbuf.Buffer
}

func nop[T any, K comparable](context.Context, *sched.Job[T, K]) error { return nil }

// run runs test in a synctest bubble with a fixture.
func run(t *testing.T, test func(t *testing.T, f *fixture)) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) { test(t, setup(t)) })
}

func setup(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	s, err := sched.New(sched.Config{Workers: 2, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{s: s, t0: time.Now(), log: &logbuf.Buffer{}}
	f.ints = must.Queue(t, s, "ints", sched.QueueConfig[int, int]{Handler: nop[int, int]})
	f.names = must.Queue(t, s, "names", sched.QueueConfig[string, string]{Handler: nop[string, string]})
	f.orders = must.Queue(t, s, "orders", sched.QueueConfig[order, int]{
		Handler: nop[order, int], Key: func(o order) int { return o.ID },
	})
	f.fails = must.Queue(t, s, "fails", sched.QueueConfig[string, string]{
		Handler: func(context.Context, *sched.Job[string, string]) error {
			return sched.Permanent(errors.New("malformed input"))
		},
	})
	f.odd = must.Queue(t, s, "odd", sched.QueueConfig[odd, int]{
		Handler: nop[odd, int], Key: func(o odd) int { return o.N },
	})
	f.ints.Pause()
	f.names.Pause()
	f.orders.Pause()
	f.odd.Pause()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	for i := 1; i <= 30; i++ {
		must.Add(t, f.ints, i)
	}
	must.Add(t, f.orders, order{1, "book"})
	must.Add(t, f.orders, order{2, "pen"})
	must.Add(t, f.orders, order{3, "later"}, sched.After(1000*time.Hour))
	for _, v := range []string{"bad-1", "bad-2", "bad-3"} {
		must.Add(t, f.fails, v)
	}
	for i, v := range []any{42, make(chan int), func() {}, math.NaN(), panicky{}, failing{}, garbage{}, "fine"} {
		must.Add(t, f.odd, odd{i + 1, v})
	}
	time.Sleep(time.Hour) // fake time: the names come later
	for _, v := range []string{"alpha", "beta", "gamma"} {
		must.Add(t, f.names, v)
	}
	time.Sleep(time.Hour)
	for _, v := range []string{"user-1", "user-2", "user-3"} {
		must.Add(t, f.names, v)
	}
	synctest.Wait() // the fails have failed
	if c := must.Counts(t, f.fails); c.Failed != 3 {
		t.Fatalf("fails: %+v, want 3 failed", c)
	}
	logger := f.log.Logger()
	f.ro = newHandler(t, s.Inspector(), schedhttp.Options{Logger: logger})
	f.rw = newHandler(t, s.Inspector(), schedhttp.Options{AllowWrites: true, Logger: logger})
	return f
}

func newHandler(t *testing.T, insp *sched.Inspector, opts schedhttp.Options) *schedhttp.Handler {
	t.Helper()
	h, err := schedhttp.New(insp, opts)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// serve serves method target with body (none if nil) and returns the
// recorded response.
func serve(h http.Handler, method, target string, body io.Reader) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, body)
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// call serves method target and decodes the JSON answer into out, failing
// the test unless the status is want and the answer is one JSON document.
func call(t *testing.T, h http.Handler, method, target string, want int, out any) {
	t.Helper()
	w := serve(h, method, target, nil)
	check(t, w, method+" "+target, want, out)
}

func check(t *testing.T, w *httptest.ResponseRecorder, what string, want int, out any) {
	t.Helper()
	if w.Code != want {
		t.Fatalf("%s: status %d, want %d: %s", what, w.Code, want, w.Body)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s: Content-Type %q", what, ct)
	}
	dec := json.NewDecoder(bytes.NewReader(w.Body.Bytes()))
	dec.DisallowUnknownFields()
	if out == nil {
		var m map[string]any
		out = &m
	}
	if err := dec.Decode(out); err != nil {
		t.Fatalf("%s: %v in %s", what, err, w.Body)
	}
	if dec.More() {
		t.Fatalf("%s: more than one JSON value in %s", what, w.Body)
	}
}

// errorOf serves method target and returns the error message of the
// answer, failing the test unless its status is want.
func errorOf(t *testing.T, h http.Handler, method, target string, body io.Reader, want int) string {
	t.Helper()
	w := serve(h, method, target, body)
	var e struct {
		Error   string `json:"error"`
		Deleted *int   `json:"deleted"`
		Retried *int   `json:"retried"`
	}
	check(t, w, method+" "+target, want, &e)
	if e.Error == "" {
		t.Fatalf("%s %s: no error message in %s", method, target, w.Body)
	}
	return e.Error
}

// page lists one page.
func page(t *testing.T, h http.Handler, target string) schedhttp.Page {
	t.Helper()
	var p schedhttp.Page
	call(t, h, "GET", target, http.StatusOK, &p)
	return p
}

// count counts.
func count(t *testing.T, h http.Handler, query string) int {
	t.Helper()
	var c struct {
		Count int `json:"count"`
	}
	call(t, h, "GET", "/count"+query, http.StatusOK, &c)
	return c.Count
}

// entry gets an entry.
func entry(t *testing.T, h http.Handler, queue string, id sched.ID) schedhttp.Entry {
	t.Helper()
	var e schedhttp.Entry
	call(t, h, "GET", "/entries/"+queue+"/"+itoa(id), http.StatusOK, &e)
	return e
}

func itoa(id sched.ID) string { return strconv.FormatUint(uint64(id), 10) }

func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }

func newRequest(method, target string) *http.Request { return httptest.NewRequest(method, target, nil) }

// replay returns a handler that answers with what w recorded, so that
// errorOf can check an answer served by hand.
func replay(w *httptest.ResponseRecorder) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		for k, v := range w.Header() {
			rw.Header()[k] = v
		}
		rw.WriteHeader(w.Code)
		_, _ = rw.Write(w.Body.Bytes())
	})
}

func httptestRequest(method, target string, body io.Reader) *http.Request {
	return httptest.NewRequest(method, target, body)
}
