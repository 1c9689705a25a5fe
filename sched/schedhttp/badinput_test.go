package schedhttp_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/jobkit/jobkit/sched/schedhttp"
)

// Every class of bad input is answered with its status and a JSON error
// that says what was wrong, and changes nothing.
func TestBadInput(t *testing.T) {
	run(t, func(t *testing.T, f *fixture) {
		queues := strings.Repeat("queue=ints&", schedhttp.MaxQueues) + "queue=names"
		states := strings.Repeat("state=failed&", 8) + "state=pending"
		long := strings.Repeat("x", schedhttp.MaxPrefix+1)
		for _, c := range []struct {
			method, target string
			body           string // JSON unless it starts with "text:"
			status         int
			says           string // in the error message
		}{
			// Values that do not parse.
			{"GET", "/entries?state=bogus", "", 400, `unknown state "bogus"`},
			{"GET", "/entries?state=", "", 400, `unknown state ""`},
			{"GET", "/entries?state=Failed", "", 400, "unknown state"},
			{"GET", "/count?state=bogus", "", 400, "unknown state"},
			{"GET", "/entries?from=yesterday", "", 400, "RFC 3339"},
			{"GET", "/entries?to=2025-13-01T00:00:00Z", "", 400, "RFC 3339"},
			{"GET", "/entries?from=", "", 400, "RFC 3339"},
			{"GET", "/entries?from=2025-01-01T00:00:00+02:00", "", 400, "escape it as %2B"},
			{"GET", "/count?from=2025-01-02T00:00:00Z&to=2025-01-01T00:00:00Z", "", 400, "before from"},
			{"GET", "/entries?after=nocursor", "", 400, "not a cursor"},
			{"GET", "/entries?after=ints/x", "", 400, "not a cursor"},
			{"GET", "/entries?after=/3", "", 400, "not a cursor"},
			{"GET", "/entries?after=ints/-1", "", 400, "not a cursor"},
			{"GET", "/entries?limit=0", "", 400, "limit"},
			{"GET", "/entries?limit=-1", "", 400, "limit"},
			{"GET", "/entries?limit=101", "", 400, "[1, 100]"},
			{"GET", "/entries?limit=ten", "", 400, "limit"},
			{"GET", "/entries?limit=", "", 400, "limit"},
			{"GET", "/entries?limit=1e2", "", 400, "limit"},
			{"GET", "/entries?payloads=maybe", "", 400, "payloads"},
			{"GET", "/entries?queue=", "", 400, "empty queue name"},
			{"GET", "/entries/ints/0", "", 400, "positive integer"},
			{"POST", "/retry?queue=fails&reset=maybe", "", 400, "reset"},
			{"POST", "/entries/fails/1/retry?reset=2", "", 400, "reset"},
			// Malformed query strings.
			{"GET", "/entries?%zz", "", 400, "malformed query"},
			{"GET", "/entries?queue=ints;state=failed", "", 400, "malformed query"},
			// Unknown parameters, and parameters a route does not take.
			{"GET", "/entries?bogus=1", "", 400, `unknown parameter "bogus"`},
			{"GET", "/entries?Queue=ints", "", 400, `unknown parameter "Queue"`},
			{"GET", "/count?limit=5", "", 400, `unknown parameter "limit"`},
			{"GET", "/count?after=ints/1", "", 400, `unknown parameter "after"`},
			{"GET", "/queues?x=1", "", 400, "takes none"},
			{"GET", "/queues/ints?x=1", "", 400, "takes none"},
			{"POST", "/delete?queue=fails&reset=true", "", 400, `unknown parameter "reset"`},
			{"POST", "/queues/ints/pause?now=1", "", 400, "takes none"},
			{"DELETE", "/entries/ints/1?force=1", "", 400, "takes none"},
			// Too many values.
			{"GET", "/entries?limit=1&limit=2", "", 400, "at most one"},
			{"GET", "/entries?prefix=a&prefix=b", "", 400, "at most one"},
			{"GET", "/entries?after=ints/1&after=ints/2", "", 400, "at most one"},
			{"GET", "/count?from=2025-01-01T00:00:00Z&from=2025-01-01T00:00:00Z", "", 400, "at most one"},
			{"GET", "/entries?payloads=true&payloads=true", "", 400, "at most one"},
			// Filters too large.
			{"GET", "/entries?" + queues, "", 400, "at most 64"},
			{"GET", "/count?" + states, "", 400, "at most 8"},
			{"GET", "/count?prefix=" + long, "", 400, "at most 1024"},
			{"GET", "/entries?after=" + strings.Repeat("q", 300) + "/1", "", 400, "at most 256"},
			{"GET", "/entries?prefix=" + strings.Repeat("y", schedhttp.MaxQuery), "", 400, "query string"},
			{"POST", "/delete", `{"queue":["` + strings.Repeat(`ints","`, schedhttp.MaxQueues) + `names"]}`, 400, "at most 64"},
			{"POST", "/delete", `{"prefix":"` + long + `"}`, 400, "at most 1024"},
			// Writes by an empty filter.
			{"POST", "/delete", "", 400, "empty filter"},
			{"POST", "/retry?reset=true", "", 400, "empty filter"},
			{"POST", "/delete?prefix=", "", 400, "empty filter"},
			{"POST", "/delete", `{}`, 400, "empty filter"},
			{"POST", "/delete", `{"queue":[]}`, 400, "empty filter"},
			// Bodies.
			{"GET", "/entries", `{"queue":["ints"]}`, 400, "takes no body"},
			{"POST", "/queues/ints/pause", `{}`, 400, "takes no body"},
			{"POST", "/delete?queue=fails", `{"queue":["fails"]}`, 400, "not both"},
			{"POST", "/delete", "text:queue=fails", 415, "application/json"},
			{"POST", "/delete", `{"queue":"fails"}`, 400, "malformed JSON"},
			{"POST", "/delete", `{"queue":["fails"]`, 400, "malformed JSON"},
			{"POST", "/delete", `{"queue":["fails"]}{}`, 400, "more than one JSON value"},
			{"POST", "/delete", `{"queue":["fails"]}]`, 400, "malformed JSON"},
			{"POST", "/delete", `{"queues":["fails"]}`, 400, `unknown field "queues"`},
			{"POST", "/delete", `{"queue":["fails"],"reset":true}`, 400, `unknown parameter "reset"`},
			{"POST", "/delete", `{"state":["bogus"]}`, 400, "unknown state"},
			{"POST", "/retry", `{"queue":["fails"],"from":"soon"}`, 400, "RFC 3339"},
			{"POST", "/delete", `null`, 400, "empty filter"},
			// Unknown queues and entries.
			{"GET", "/entries?queue=nope", "", 404, `unknown queue: "nope"`},
			{"GET", "/entries?queue=ints&queue=nope", "", 404, "unknown queue"},
			{"GET", "/count?queue=nope", "", 404, "unknown queue"},
			{"POST", "/delete?queue=nope", "", 404, "unknown queue"},
			{"POST", "/retry?queue=nope", "", 404, "unknown queue"},
			{"GET", "/entries/ints/999", "", 404, "not found"},
			// Unknown routes and methods.
			{"GET", "/nope", "", 404, "no route GET /nope"},
			{"GET", "/entries/", "", 404, "no route"},
			{"GET", "/entries/ints/1/bogus", "", 404, "no route"},
			{"PUT", "/queues", "", 405, "use GET, HEAD"},
			{"DELETE", "/entries", "", 405, "not allowed"},
			{"GET", "/delete?queue=fails", "", 405, "use POST"},
			{"GET", "/entries/ints/1/retry", "", 405, "use POST"},
			{"POST", "/entries/ints/1", "", 405, "use GET, DELETE, HEAD"},
		} {
			var body io.Reader
			if c.body != "" {
				body = strings.NewReader(strings.TrimPrefix(c.body, "text:"))
			}
			r := newRequest(c.method, c.target)
			if body != nil {
				r = httptestRequest(c.method, c.target, body)
				if !strings.HasPrefix(c.body, "text:") {
					r.Header.Set("Content-Type", "application/json; charset=utf-8")
				} else {
					r.Header.Set("Content-Type", "text/plain")
				}
			}
			w := newRecorder()
			f.rw.ServeHTTP(w, r)
			what := c.method + " " + short(c.target)
			var e struct {
				Error   string `json:"error"`
				Deleted *int   `json:"deleted"`
				Retried *int   `json:"retried"`
			}
			check(t, w, what, c.status, &e)
			if !strings.Contains(e.Error, c.says) {
				t.Errorf("%s: error %q does not say %q", what, e.Error, c.says)
			}
			if c.status == 405 && w.Header().Get("Allow") == "" {
				t.Errorf("%s: 405 without Allow", what)
			}
		}
		if n := count(t, f.ro, ""); n != 50 {
			t.Errorf("bad requests changed the entries: %d, want 50", n)
		}
	})
}

func short(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// A body larger than MaxBody is refused with 413: not read at all when its
// length is declared, not read past the limit when it is not.
func TestBodyTooLarge(t *testing.T) {
	run(t, func(t *testing.T, f *fixture) {
		const max = 1024
		h := newHandler(t, f.s.Inspector(), schedhttp.Options{AllowWrites: true, MaxBody: max, Logger: slog.New(slog.DiscardHandler)})
		big := `{"prefix":"` + strings.Repeat("x", 4*max) + `"}`
		for _, declared := range []bool{true, false} {
			for _, target := range []string{"/delete", "/retry", "/entries", "/queues/ints/pause"} {
				cr := &countingReader{r: strings.NewReader(big)}
				method := "POST"
				if target == "/entries" {
					method = "GET"
				}
				r := httptestRequest(method, target, cr)
				r.Header.Set("Content-Type", "application/json")
				if declared {
					r.ContentLength = int64(len(big))
				} else {
					r.ContentLength = -1 // chunked
				}
				w := newRecorder()
				h.ServeHTTP(w, r)
				want := http.StatusRequestEntityTooLarge
				if !declared && (target == "/entries" || target == "/queues/ints/pause") {
					want = http.StatusBadRequest // takes no body: not read at all
				}
				var e struct {
					Error string `json:"error"`
				}
				check(t, w, method+" "+target, want, &e)
				switch {
				case declared && cr.n != 0:
					t.Errorf("%s declared: %d bytes read, want none", target, cr.n)
				case cr.n > max+1:
					t.Errorf("%s chunked: %d bytes read, want at most %d", target, cr.n, max+1)
				}
			}
		}
		// Declared, it is refused before anything else is checked: the
		// route, the method, whether writes are allowed. The limit is all
		// it tells: the application's authentication came before.
		ro := newHandler(t, f.s.Inspector(), schedhttp.Options{MaxBody: max, Logger: slog.New(slog.DiscardHandler)})
		for _, c := range []struct {
			h              http.Handler
			method, target string
		}{{ro, "POST", "/delete"}, {h, "GET", "/nope"}, {h, "PUT", "/delete"}, {h, "POST", "/x/../delete"}} {
			r := httptestRequest(c.method, c.target, strings.NewReader(big))
			r.Header.Set("Content-Type", "application/json")
			w := newRecorder()
			c.h.ServeHTTP(w, r)
			check(t, w, c.method+" "+c.target+" declared too large", http.StatusRequestEntityTooLarge, nil)
		}
		// Just under the limit is fine.
		ok := `{"queue":["names"],"prefix":"` + strings.Repeat("z", max-40) + `"}`
		if len(ok) > max {
			t.Fatalf("test body of %d bytes", len(ok))
		}
		w := serve(h, "POST", "/delete", strings.NewReader(ok))
		var n struct {
			Deleted int `json:"deleted"`
		}
		check(t, w, "a body under the limit", http.StatusOK, &n)
	})
}

// Every answer, bad or not, is one JSON document; a listing's is one even
// when written a piece at a time.
func TestAnswersAreJSON(t *testing.T) {
	run(t, func(t *testing.T, f *fixture) {
		for _, target := range []string{
			"/entries?payloads=true", "/entries?limit=1", "/entries?queue=odd&payloads=true&limit=3",
			"/entries?state=running", "/queues", "/count", "/entries/odd/3",
		} {
			w := serve(f.ro, "GET", target, nil)
			if w.Code != http.StatusOK || !json.Valid(w.Body.Bytes()) {
				t.Errorf("%s: %d %s", target, w.Code, w.Body)
			}
		}
		if w := serve(f.ro, "HEAD", "/entries", nil); w.Code != http.StatusOK {
			t.Errorf("HEAD /entries: %d", w.Code)
		}
	})
}
