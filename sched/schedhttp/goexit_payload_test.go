package schedhttp_test

import (
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/jobkit/jobkit/sched/internal/must"
	"github.com/jobkit/jobkit/sched/schedhttp"
	"net/http/httptest"
)

// goexiting's MarshalJSON ends the goroutine that encodes it, as a
// t.FailNow in it would.
type goexiting struct{}

func (goexiting) MarshalJSON() ([]byte, error) {
	runtime.Goexit()
	return nil, nil
}

// serveReturns serves method target on a goroutine of its own and reports
// whether ServeHTTP returned, with the recorded answer.
func serveReturns(h http.Handler, method, target string) (bool, *httptest.ResponseRecorder) {
	w := newRecorder()
	returned := false
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(w, newRequest(method, target))
		returned = true
	}()
	<-done
	return returned, w
}

// A payload whose MarshalJSON calls runtime.Goexit is a payload that
// cannot be encoded, as one that panics is: the listing and the get are
// answered, with payloadError in its place. It used to end the request's
// goroutine mid-answer: the client got no answer at all (net/http closes
// the connection) or a page cut short, not JSON.
func TestAPayloadWhoseMarshalJSONCallsGoexitIsNotEncoded(t *testing.T) {
	run(t, func(t *testing.T, f *fixture) {
		must.Add(t, f.odd, odd{9, goexiting{}})
		must.Add(t, f.odd, odd{10, "after"})
		returned, w := serveReturns(f.ro, "GET", "/entries?queue=odd&payloads=true&after=odd/7")
		if !returned {
			t.Fatalf("GET /entries: ServeHTTP did not return; answered so far: %d %s", w.Code, w.Body)
		}
		var p schedhttp.Page
		check(t, w, "GET /entries", http.StatusOK, &p)
		if len(p.Entries) != 3 || p.Error != "" {
			t.Fatalf("%d entries, error %q; want odd/8, 9 and 10", len(p.Entries), p.Error)
		}
		if e := p.Entries[1]; e.Payload != nil || !strings.Contains(e.PayloadError, "Goexit") {
			t.Errorf("odd/9: payload %s, error %q; want no payload, an error saying Goexit", e.Payload, e.PayloadError)
		}
		if e := p.Entries[2]; string(e.Payload) != `{"N":10,"V":"after"}` {
			t.Errorf("odd/10: payload %s, error %q", e.Payload, e.PayloadError)
		}
		returned, w = serveReturns(f.ro, "GET", "/entries/odd/9")
		if !returned {
			t.Fatalf("GET /entries/odd/9: ServeHTTP did not return; answered so far: %d %s", w.Code, w.Body)
		}
		var e schedhttp.Entry
		check(t, w, "GET /entries/odd/9", http.StatusOK, &e)
		if e.Payload != nil || !strings.Contains(e.PayloadError, "Goexit") {
			t.Errorf("get odd/9: payload %s, error %q", e.Payload, e.PayloadError)
		}
	})
}
