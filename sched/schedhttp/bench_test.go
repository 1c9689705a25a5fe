package schedhttp_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/schedhttp"
)

// discardWriter is a ResponseWriter that keeps nothing, so that a benchmark
// measures the handler's own allocations.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(int)             {}

// collect is the baseline: a handler that collects the page, then encodes
// it, as one would write it without streaming.
func collect(insp *sched.Inspector, limit int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page := struct {
			Entries []sched.Summary
			Next    string
		}{}
		for s, err := range insp.List(r.Context(), sched.Query{Payloads: true}) {
			if err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			if len(page.Entries) == limit {
				page.Next = page.Entries[limit-1].Cursor().String()
				break
			}
			page.Entries = append(page.Entries, s)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&page)
	})
}

// BenchmarkHandler_List serves one page of n entries with payloads from a
// queue of 10,000; allocs/op and B/op divided by n are the cost per entry.
func BenchmarkHandler_List(b *testing.B) {
	s, err := sched.New(sched.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	q, err := sched.NewQueue(s, "orders", sched.QueueConfig[order, int]{
		Handler: nop[order, int], Key: func(o order) int { return o.ID },
	})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 10_000 {
		if _, _, err := q.Add(context.Background(), order{i, "item " + strconv.Itoa(i)}); err != nil {
			b.Fatal(err)
		}
	}
	for _, n := range []int{100, 1000} {
		stream, err := schedhttp.New(s.Inspector(), schedhttp.Options{MaxPage: n})
		if err != nil {
			b.Fatal(err)
		}
		for _, impl := range []struct {
			name string
			h    http.Handler
		}{{"stream", stream}, {"collect", collect(s.Inspector(), n)}} {
			b.Run("impl="+impl.name+"/n="+strconv.Itoa(n), func(b *testing.B) {
				r := httptest.NewRequest("GET", "/entries?payloads=true&limit="+strconv.Itoa(n), nil)
				w := &discardWriter{h: http.Header{}}
				b.ReportAllocs()
				for b.Loop() {
					impl.h.ServeHTTP(w, r)
				}
			})
		}
	}
}
