package schedhttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/jobkit/jobkit/sched/schedhttp"
)

// to= the zero time.Time (the year 1, in any zone) selects the entries
// enqueued before it: none. sched.Query reads a zero To as no bound, so it
// used to select every entry, and a write by it reached them all.
func TestToZeroTime(t *testing.T) {
	run(t, func(t *testing.T, f *fixture) {
		for _, to := range []string{"0001-01-01T00:00:00Z", "0001-01-01T01:00:00%2B01:00"} {
			if n := count(t, f.ro, "?queue=ints&to="+to); n != 0 {
				t.Errorf("count to=%s: %d, want 0", to, n)
			}
			if p := page(t, f.ro, "/entries?queue=ints&to="+to); len(p.Entries) != 0 || p.Next != "" {
				t.Errorf("list to=%s: %d entries, next %q", to, len(p.Entries), p.Next)
			}
		}
		var d struct {
			Deleted int `json:"deleted"`
		}
		call(t, f.rw, "POST", "/delete?queue=fails&to=0001-01-01T00:00:00Z", http.StatusOK, &d)
		if d.Deleted != 0 {
			t.Errorf("delete to the year 1: %d deleted, want 0", d.Deleted)
		}
		// Alone it is a filter too: one that selects nothing.
		call(t, f.rw, "POST", "/delete?to=0001-01-01T00:00:00Z", http.StatusOK, &d)
		if d.Deleted != 0 {
			t.Errorf("delete to the year 1 alone: %d deleted, want 0", d.Deleted)
		}
		w := serve(f.rw, "POST", "/delete", strings.NewReader(`{"queue":["ints"],"to":"0001-01-01T00:00:00Z"}`))
		check(t, w, "delete by body to the year 1", http.StatusOK, &d)
		if d.Deleted != 0 {
			t.Errorf("delete by body to the year 1: %d deleted, want 0", d.Deleted)
		}
		if n := count(t, f.ro, ""); n != 50 {
			t.Errorf("%d entries left, want 50", n)
		}
		// from= the year 1 selects everything, as no from does.
		if n := count(t, f.ro, "?queue=ints&from=0001-01-01T00:00:00Z"); n != 30 {
			t.Errorf("count from the year 1: %d, want 30", n)
		}
	})
}

// A JSON filter names each field once, exactly. encoding/json would take
// the last of repeated fields and match names regardless of case, so that
// these bodies used to delete entries the client never named (or that a
// proxy reading the first field never saw).
func TestBodyFieldNames(t *testing.T) {
	run(t, func(t *testing.T, f *fixture) {
		for _, c := range []struct{ body, says string }{
			{`{"queue":["fails"],"queue":["ints"]}`, `field "queue" given more than once`},
			{`{"queue":["fails"],"qu\u0065ue":["ints"]}`, `field "queue" given more than once`},
			{`{"Queue":["ints"]}`, `unknown field "Queue"`},
			{`{"QUEUE":["ints"]}`, `unknown field "QUEUE"`},
			{`{"queue":["names"],"ſtate":["pending"]}`, `unknown field "ſtate"`},
			{`{"queue":["names"],"prefix":"user-","Prefix":""}`, `unknown field "Prefix"`},
		} {
			msg := errorOf(t, f.rw, "POST", "/delete", strings.NewReader(c.body), http.StatusBadRequest)
			if !strings.Contains(msg, c.says) {
				t.Errorf("%s: error %q does not say %q", c.body, msg, c.says)
			}
		}
		msg := errorOf(t, f.rw, "POST", "/retry", strings.NewReader(`{"queue":["fails"],"reset":false,"Reset":true}`), http.StatusBadRequest)
		if !strings.Contains(msg, `unknown field "Reset"`) {
			t.Errorf("retry: %q", msg)
		}
		if n := count(t, f.ro, ""); n != 50 {
			t.Errorf("%d entries left, want 50", n)
		}
		// The exact names, once each, are still taken.
		var d struct {
			Deleted int `json:"deleted"`
		}
		check(t, serve(f.rw, "POST", "/delete", strings.NewReader(`{"queue":["names"],"prefix":"user-"}`)), "exact body", http.StatusOK, &d)
		if d.Deleted != 3 {
			t.Errorf("deleted %d, want 3", d.Deleted)
		}
	})
}

// Hostile values of every parameter are refused with 400 and a JSON error,
// or, when they are well formed, answered.
func TestHostileValues(t *testing.T) {
	run(t, func(t *testing.T, f *fixture) {
		for _, c := range []struct {
			target string
			status int
		}{
			{"/entries?limit=9223372036854775807", 400},
			{"/entries?limit=99999999999999999999999999999", 400},
			{"/entries?limit=1e30", 400},
			{"/entries?limit=-9223372036854775808", 400},
			{"/entries?limit=0x10", 400},
			{"/entries?limit=%2B5", 200}, // Atoi takes a sign: +5 is 5
			{"/entries?limit=%ff", 400},
			{"/entries?after=ints/18446744073709551616", 400},
			{"/entries?after=ints/%2B3", 400},
			{"/entries?after=ints/1e3", 400},
			{"/entries?after=ints/18446744073709551615", 200},
			{"/entries?after=%ff/3", 200},
			{"/entries?after=ints/", 400},
			{"/entries?queue=%ff", 404},
			{"/entries?queue=" + strings.Repeat("q", 5000), 404},
			{"/entries?prefix=%ff%fe", 200},
			{"/count?prefix=" + strings.Repeat("%ff", schedhttp.MaxPrefix), 200},
			{"/count?prefix=" + strings.Repeat("%ff", schedhttp.MaxPrefix+1), 400},
			{"/count?from=1e30", 400},
			{"/count?from=-0001-01-01T00:00:00Z", 400},
			{"/count?from=99999-01-01T00:00:00Z", 400},
			{"/count?to=9999-12-31T23:59:59.999999999Z", 200},
			{"/count?state=%ff", 400},
			{"/count?state=1", 400},
			{"/entries/ints/18446744073709551616", 400},
			{"/entries/ints/-1", 400},
			{"/entries/ints/%2B1", 400},
			{"/entries/ints/1e3", 400},
			{"/entries/ints/18446744073709551615", 404},
			{"/entries/%ff/1", 404},
			{"/queues/%ff", 404},
			{"/queues/" + strings.Repeat("q", 5000), 404},
		} {
			w := serve(f.ro, "GET", c.target, nil)
			check(t, w, "GET "+short(c.target), c.status, nil)
			if c.status != 200 && !strings.Contains(w.Body.String(), `"error"`) {
				t.Errorf("GET %s: %s", short(c.target), w.Body)
			}
		}
	})
}

// failWriter fails every write from the n-th on, as a connection the
// client closed does, and counts the writes tried after the first failure.
type failWriter struct {
	*httptest.ResponseRecorder
	n, after int
}

func (w *failWriter) Write(p []byte) (int, error) {
	switch w.n--; {
	case w.n < 0:
		w.after++
		return 0, errors.New("broken pipe")
	case w.n == 0:
		return 0, errors.New("broken pipe")
	}
	return w.ResponseRecorder.Write(p)
}

// A client that goes away mid-listing stops it at the next write: the
// handler returns without writing again.
func TestClientGoneMidListing(t *testing.T) {
	run(t, func(t *testing.T, f *fixture) {
		for n := 1; n <= 4; n++ {
			w := &failWriter{ResponseRecorder: httptest.NewRecorder(), n: n}
			f.ro.ServeHTTP(w, newRequest("GET", "/entries?payloads=true"))
			if w.after != 0 {
				t.Errorf("failing from write %d: %d writes after the first failure", n, w.after)
			}
		}
	})
}

// Requests racing Stop are answered, each with one JSON document and a
// status the documentation allows, and leave no goroutine behind (see
// TestMain).
func TestRequestsRacingStop(t *testing.T) {
	run(t, func(t *testing.T, f *fixture) {
		f.ints.Resume()
		targets := []struct{ method, target string }{
			{"GET", "/entries?payloads=true"}, {"GET", "/count?prefix=1"}, {"GET", "/queues"},
			{"GET", "/entries/ints/3"}, {"POST", "/retry?queue=fails"}, {"POST", "/delete?queue=names"},
			{"DELETE", "/entries/ints/5"}, {"POST", "/queues/orders/resume"}, {"POST", "/entries/ints/7/disable"},
		}
		var wg sync.WaitGroup
		for _, tg := range targets {
			wg.Go(func() {
				w := serve(f.rw, tg.method, tg.target, nil)
				switch w.Code {
				case 200, 404, 409, 503:
				default:
					t.Errorf("%s %s: %d %s", tg.method, tg.target, w.Code, w.Body)
				}
				if !json.Valid(w.Body.Bytes()) {
					t.Errorf("%s %s: not JSON: %s", tg.method, tg.target, w.Body)
				}
			})
		}
		if err := f.s.Stop(context.Background()); err != nil {
			t.Error(err)
		}
		wg.Wait()
	})
}

// A path with an empty, "." or ".." segment, or the empty path, is no
// route: it is answered 404 in JSON and not redirected. http.ServeMux used
// to answer it with a 307 to the clean path, which a client following
// redirects repeats with its method and body; and behind
// http.StripPrefix the redirect lost the prefix, sending a POST /delete or
// a DELETE out of the API to whatever the application serves there.
func TestUncleanPaths(t *testing.T) {
	run(t, func(t *testing.T, f *fixture) {
		h := http.StripPrefix("/jobs", f.rw)
		for _, c := range []struct{ method, target string }{
			{"POST", "/jobs/x/../delete?queue=names"},
			{"POST", "/jobs/./retry?queue=fails"},
			{"POST", "/jobs//delete?queue=names"},
			{"POST", "/jobs/delete/?queue=names"},
			{"DELETE", "/jobs/entries/names/1/../2"},
			{"DELETE", "/jobs/entries//names/2"},
			{"POST", "/jobs/entries/fails/1/./retry"},
			{"POST", "/jobs/entries/names/2/disable/."},
			{"POST", "/jobs/queues/ints/../names/resume"},
			{"GET", "/jobs/./queues"},
			{"GET", "/jobs/queues/.."},
			{"GET", "/jobs/entries/../count"},
			{"GET", "/jobs"},
		} {
			w := serve(h, c.method, c.target, nil)
			if loc := w.Header().Get("Location"); loc != "" {
				t.Errorf("%s %s: Location %q", c.method, c.target, loc)
			}
			msg := errorOf(t, replay(w), c.method, c.target, nil, http.StatusNotFound)
			if !strings.Contains(msg, "no route") {
				t.Errorf("%s %s: error %q", c.method, c.target, msg)
			}
		}
		// Nothing was written.
		if n := count(t, f.ro, ""); n != 50 {
			t.Errorf("%d entries, want 50", n)
		}
		if e := entry(t, f.ro, "names", 2); e.Disabled {
			t.Errorf("names/2 disabled")
		}
		// Escaped dots are not segments: "%2E" is a queue's name.
		errorOf(t, h, "GET", "/jobs/queues/%2E", nil, http.StatusNotFound)
		if msg := errorOf(t, h, "GET", "/jobs/queues/%2E%2E", nil, http.StatusNotFound); !strings.Contains(msg, "unknown queue") {
			t.Errorf("GET /queues/%%2E%%2E: %q, want an unknown queue", msg)
		}
	})
}
