package schedhttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
	"github.com/jobkit/jobkit/sched/schedhttp"
)

// pos is an entry's position in a listing.
type pos struct {
	q  string
	id sched.ID
}

func (a pos) less(b pos) bool { return a.q < b.q || a.q == b.q && a.id < b.id }

func (a pos) String() string { return sched.Cursor{Queue: a.q, ID: a.id}.String() }

// Paging by cursor over more than two pages, adding and deleting entries
// between pages: no entry is seen twice or out of order, no deleted entry
// is seen, and every entry that stayed is seen, as is every entry added
// ahead of the cursor.
func TestPagingWhileQueuesChange(t *testing.T) {
	run(t, func(t *testing.T, f *fixture) {
		mustSee := map[pos]bool{}
		for i := range 30 {
			mustSee[pos{"ints", sched.ID(i + 1)}] = true
		}
		for i := range 6 {
			mustSee[pos{"names", sched.ID(i + 1)}] = true
		}
		seen, deleted := map[pos]bool{}, map[pos]bool{}
		var cursor pos
		after, pages, behind := "", 0, 0
		for {
			p := page(t, f.ro, "/entries?queue=names&queue=ints&limit=7&after="+url.QueryEscape(after))
			pages++
			if len(p.Entries) > 7 || p.Error != "" {
				t.Fatalf("page %d: %d entries, error %q", pages, len(p.Entries), p.Error)
			}
			for _, e := range p.Entries {
				k := pos{e.Queue, e.ID}
				switch {
				case seen[k]:
					t.Fatalf("page %d: %v seen twice", pages, k)
				case !cursor.less(k):
					t.Fatalf("page %d: %v after %v", pages, k, cursor)
				case deleted[k]:
					t.Fatalf("page %d: deleted %v seen", pages, k)
				}
				seen[k], cursor = true, k
			}
			if p.Next == "" {
				break
			}
			if p.Next != cursor.String() {
				t.Fatalf("page %d: next %q, want %q", pages, p.Next, cursor)
			}
			after = p.Next

			// Change the queues: an int (ahead of the cursor while it is in
			// ints, behind it once it is in names) and a name (always
			// ahead: names come after ints), then delete the next entry
			// the listing would show.
			k := pos{"ints", must.Add(t, f.ints, 1000+pages)}
			if cursor.less(k) {
				mustSee[k] = true
			} else {
				behind++
			}
			mustSee[pos{"names", must.Add(t, f.names, "new-"+itoa(sched.ID(pages)))}] = true
			var ahead []pos
			for k := range mustSee {
				if cursor.less(k) {
					ahead = append(ahead, k)
				}
			}
			next := slices.MinFunc(ahead, func(a, b pos) int {
				if a.less(b) {
					return -1
				}
				return 1
			})
			call(t, f.rw, "DELETE", "/entries/"+next.q+"/"+itoa(next.id), http.StatusOK, nil)
			delete(mustSee, next)
			deleted[next] = true
		}
		for k := range mustSee {
			if !seen[k] {
				t.Errorf("%v stayed but was not seen", k)
			}
		}
		if pages < 3 || behind == 0 {
			t.Errorf("%d pages, %d entries added behind the cursor: the test does not test", pages, behind)
		}
		if len(seen) != len(mustSee) {
			t.Errorf("seen %d entries, want %d", len(seen), len(mustSee))
		}
	})
}

// Pages are at most limit long, and limit defaults to MaxPage.
func TestPageSize(t *testing.T) {
	run(t, func(t *testing.T, f *fixture) {
		h := newHandler(t, f.s.Inspector(), schedhttp.Options{MaxPage: 5})
		p := page(t, h, "/entries?queue=ints")
		if len(p.Entries) != 5 || p.Next != "ints/5" {
			t.Fatalf("default page: %d entries, next %q", len(p.Entries), p.Next)
		}
		p = page(t, h, "/entries?queue=ints&limit=2&after=ints/28")
		if len(p.Entries) != 2 || p.Next != "" {
			t.Fatalf("last page: %d entries, next %q; a full last page has no next", len(p.Entries), p.Next)
		}
		p = page(t, h, "/entries?queue=ints&after=ints/30")
		if len(p.Entries) != 0 || p.Next != "" {
			t.Fatalf("after the end: %+v", p)
		}
		errorOf(t, h, "GET", "/entries?limit=6", nil, http.StatusBadRequest)
	})
}

func TestCount(t *testing.T) {
	run(t, func(t *testing.T, f *fixture) {
		at := func(d time.Duration) string { return url.QueryEscape(f.t0.Add(d).UTC().Format(time.RFC3339)) }
		for query, want := range map[string]int{
			"":                                  30 + 6 + 3 + 3 + 8,
			"?queue=ints":                       30,
			"?queue=ints&queue=names":           36,
			"?queue=ints&queue=ints":            30,
			"?state=failed":                     3,
			"?state=delayed":                    1,
			"?state=pending&state=failed":       30 + 6 + 2 + 8 + 3,
			"?state=pending&state=pending":      30 + 6 + 2 + 8,
			"?state=running":                    0,
			"?queue=orders&state=pending":       2,
			"?prefix=user-":                     3,
			"?queue=names&prefix=user-":         3,
			"?queue=ints&prefix=1":              11,
			"?queue=fails&state=failed&prefix=": 3,
			"?from=" + at(30*time.Minute):       6,
			"?to=" + at(30*time.Minute):         44,
			"?from=" + at(90*time.Minute) + "&to=" + at(3*time.Hour):                                                 3,
			"?from=" + at(0) + "&to=" + at(0):                                                                        0,
			"?from=" + url.QueryEscape(f.t0.Add(30*time.Minute).In(time.FixedZone("", 2*3600)).Format(time.RFC3339)): 6,
			"?queue=names&from=" + at(time.Hour) + "&to=" + at(time.Hour+time.Second):                                3,
		} {
			if got := count(t, f.ro, query); got != want {
				t.Errorf("count%s = %d, want %d", query, got, want)
			}
		}
	})
}

func TestQueues(t *testing.T) {
	run(t, func(t *testing.T, f *fixture) {
		var qs struct {
			Queues []schedhttp.QueueSummary `json:"queues"`
		}
		call(t, f.ro, "GET", "/queues", http.StatusOK, &qs)
		var names []string
		for _, q := range qs.Queues {
			names = append(names, q.Name)
		}
		if want := []string{"fails", "ints", "names", "odd", "orders"}; !slices.Equal(names, want) {
			t.Fatalf("queues %q, want %q", names, want)
		}
		fails, ints := qs.Queues[0], qs.Queues[1]
		// They failed two hours ago: outside the one-minute window.
		if fails.Counts.Failed != 3 || fails.Counts.Added != 3 || fails.Failed != 0 || fails.Paused {
			t.Errorf("fails: %+v", fails)
		}
		if ints.Counts.Pending != 30 || !ints.Paused || ints.OldestPendingSeconds != 7200 {
			t.Errorf("ints: %+v", ints)
		}
		var one schedhttp.QueueSummary
		call(t, f.ro, "GET", "/queues/orders", http.StatusOK, &one)
		if one.Name != "orders" || one.Counts.Delayed != 1 || one.Counts.Pending != 2 {
			t.Errorf("orders: %+v", one)
		}
		errorOf(t, f.ro, "GET", "/queues/nope", nil, http.StatusNotFound)
	})
}

// A queue's summary carries Ended, the runs that ended since the scheduler
// was made, by any outcome and outside the one-minute window too, under
// "ended" in both GET /queues and GET /queues/{queue}.
func TestQueuesEnded(t *testing.T) {
	run(t, func(t *testing.T, f *fixture) {
		want := map[string]float64{"fails": 3, "ints": 0, "names": 0, "odd": 0, "orders": 0}
		var all struct {
			Queues []map[string]any `json:"queues"`
		}
		call(t, f.ro, "GET", "/queues", http.StatusOK, &all)
		if len(all.Queues) != len(want) {
			t.Fatalf("%d queues, want %d", len(all.Queues), len(want))
		}
		for _, q := range all.Queues {
			name, _ := q["name"].(string)
			if n, ok := q["ended"].(float64); !ok || n != want[name] {
				t.Errorf("GET /queues: %s ended %v (%T), want %v", name, q["ended"], q["ended"], want[name])
			}
		}
		var one schedhttp.QueueSummary
		call(t, f.ro, "GET", "/queues/fails", http.StatusOK, &one)
		if one.Ended != 3 {
			t.Errorf("GET /queues/fails: ended %d, want 3", one.Ended)
		}
	})
}

func TestGet(t *testing.T) {
	run(t, func(t *testing.T, f *fixture) {
		e := entry(t, f.ro, "orders", 1)
		if e.Queue != "orders" || e.ID != 1 || e.Key != "1" || e.State != "pending" ||
			string(e.Payload) != `{"id":1,"item":"book"}` || !e.EnqueuedAt.Equal(f.t0) ||
			e.EnqueuedAt.Location() != time.UTC || e.PayloadError != "" {
			t.Errorf("orders/1: %+v", e)
		}
		e = entry(t, f.ro, "orders", 3)
		if e.State != "delayed" || !e.RunAt.Equal(f.t0.Add(1000*time.Hour)) {
			t.Errorf("orders/3: %+v", e)
		}
		e = entry(t, f.ro, "names", 1)
		if e.Key != "alpha" || string(e.Payload) != `"alpha"` {
			t.Errorf("names/1: %+v", e)
		}
		e = entry(t, f.ro, "fails", 2)
		if e.State != "failed" || e.Attempts != 1 || e.FinishedAt.IsZero() || len(e.Errors) != 1 ||
			e.Errors[0].Message != "permanent: malformed input" || e.Errors[0].Type != "*sched.PermanentError" ||
			e.Errors[0].Attempt != 1 {
			t.Errorf("fails/2: %+v", e)
		}
		for target, want := range map[string]int{
			"/entries/orders/99":                   http.StatusNotFound,
			"/entries/nope/1":                      http.StatusNotFound,
			"/entries/orders/0":                    http.StatusBadRequest,
			"/entries/orders/x":                    http.StatusBadRequest,
			"/entries/orders/-1":                   http.StatusBadRequest,
			"/entries/orders/18446744073709551616": http.StatusBadRequest,
			"/entries/orders/1?payloads=true":      http.StatusBadRequest,
		} {
			errorOf(t, f.ro, "GET", target, nil, want)
		}
	})
}

// Queue names are text: slashes, spaces and ampersands pass escaped, in
// paths, filters and cursors.
func TestEscapedQueueNames(t *testing.T) {
	run(t, func(t *testing.T, f *fixture) {
		const name = "x/y & z"
		q := must.Queue(t, f.s, name, sched.QueueConfig[string, string]{Handler: nop[string, string]})
		q.Pause()
		must.Add(t, q, "k")
		must.Add(t, q, "l")
		p := page(t, f.ro, "/entries?limit=1&queue="+url.QueryEscape(name))
		if len(p.Entries) != 1 || p.Entries[0].Queue != name || p.Next != name+"/1" {
			t.Fatalf("page: %+v", p)
		}
		p = page(t, f.ro, "/entries?queue="+url.QueryEscape(name)+"&after="+url.QueryEscape(p.Next))
		if len(p.Entries) != 1 || p.Entries[0].Key != "l" || p.Next != "" {
			t.Fatalf("second page: %+v", p)
		}
		if e := entry(t, f.ro, url.PathEscape(name), 2); e.Key != "l" {
			t.Fatalf("get: %+v", e)
		}
		call(t, f.rw, "POST", "/queues/"+url.PathEscape(name)+"/resume", http.StatusOK, nil)
		synctest.Wait()
		if c := must.Counts(t, q); c.Succeeded != 2 {
			t.Fatalf("after resume: %+v", c)
		}
	})
}

// With writes disabled, every write answers 403 and changes nothing.
func TestWritesDisabled(t *testing.T) {
	run(t, func(t *testing.T, f *fixture) {
		before := count(t, f.ro, "")
		for _, r := range []struct{ method, target string }{
			{"POST", "/queues/ints/pause"},
			{"POST", "/queues/ints/resume"},
			{"POST", "/retry?queue=fails"},
			{"POST", "/delete?queue=fails"},
			{"POST", "/entries/fails/1/retry"},
			{"DELETE", "/entries/fails/1"},
			{"POST", "/entries/ints/1/disable"},
			{"POST", "/entries/ints/1/enable"},
			{"POST", "/queues/nope/pause"}, // 403 before 404
		} {
			if msg := errorOf(t, f.ro, r.method, r.target, nil, http.StatusForbidden); !strings.Contains(msg, "AllowWrites") {
				t.Errorf("%s %s: %q does not say how to enable writes", r.method, r.target, msg)
			}
		}
		synctest.Wait()
		if after := count(t, f.ro, ""); after != before || count(t, f.ro, "?state=failed") != 3 {
			t.Errorf("count %d after refused writes, was %d", after, before)
		}
		if c := must.Counts(t, f.ints); c.Pending != 30 || c.Disabled != 0 {
			t.Errorf("ints changed: %+v", c)
		}
	})
}

func TestRetry(t *testing.T) {
	run(t, func(t *testing.T, f *fixture) {
		var n struct {
			Retried int `json:"retried"`
		}
		call(t, f.rw, "POST", "/entries/fails/1/retry", http.StatusOK, &n)
		call(t, f.rw, "POST", "/entries/fails/2/retry?reset=true", http.StatusOK, &n)
		if n.Retried != 1 {
			t.Errorf("retried %d", n.Retried)
		}
		synctest.Wait() // they fail again
		if e := entry(t, f.ro, "fails", 1); e.State != "failed" || e.Attempts != 2 {
			t.Errorf("fails/1 retried keeping attempts: %+v", e)
		}
		if e := entry(t, f.ro, "fails", 2); e.State != "failed" || e.Attempts != 1 {
			t.Errorf("fails/2 retried with reset: %+v", e)
		}
		var q schedhttp.QueueSummary
		call(t, f.ro, "GET", "/queues/fails", http.StatusOK, &q)
		if q.Failed != 2 || q.FailureRate != 1 || q.Succeeded != 0 {
			t.Errorf("fails over the last minute: %+v", q)
		}
		errorOf(t, f.rw, "POST", "/entries/ints/1/retry", nil, http.StatusConflict) // pending
		errorOf(t, f.rw, "POST", "/entries/fails/99/retry", nil, http.StatusNotFound)
		errorOf(t, f.rw, "POST", "/entries/nope/1/retry", nil, http.StatusNotFound)

		call(t, f.rw, "POST", "/retry?queue=fails&state=failed", http.StatusOK, &n)
		if n.Retried != 3 {
			t.Errorf("retry by filter: %d, want 3", n.Retried)
		}
		synctest.Wait()
		for id, want := range []int{1: 3, 2: 2, 3: 2} {
			if id > 0 {
				if e := entry(t, f.ro, "fails", sched.ID(id)); e.Attempts != want || e.State != "failed" {
					t.Errorf("fails/%d: %d attempts, %s; want %d", id, e.Attempts, e.State, want)
				}
			}
		}
		w := serve(f.rw, "POST", "/retry", strings.NewReader(`{"queue":["fails"],"state":["failed"],"reset":true}`))
		check(t, w, "POST /retry with a body", http.StatusOK, &n)
		synctest.Wait()
		if n.Retried != 3 || entry(t, f.ro, "fails", 1).Attempts != 1 {
			t.Errorf("retry by body with reset: %d", n.Retried)
		}
		if !strings.Contains(f.log.String(), `msg="schedhttp: retry by filter"`) {
			t.Errorf("retries not logged:\n%s", f.log)
		}
	})
}

func TestDelete(t *testing.T) {
	run(t, func(t *testing.T, f *fixture) {
		var n struct {
			Deleted int `json:"deleted"`
		}
		call(t, f.rw, "DELETE", "/entries/ints/5", http.StatusOK, &n)
		if n.Deleted != 1 || count(t, f.ro, "?queue=ints") != 29 {
			t.Fatalf("delete ints/5: %d", n.Deleted)
		}
		errorOf(t, f.ro, "GET", "/entries/ints/5", nil, http.StatusNotFound)
		errorOf(t, f.rw, "DELETE", "/entries/ints/5", nil, http.StatusNotFound)
		errorOf(t, f.rw, "DELETE", "/entries/nope/5", nil, http.StatusNotFound)

		call(t, f.rw, "POST", "/delete?queue=fails&state=failed", http.StatusOK, &n)
		if n.Deleted != 3 || count(t, f.ro, "?queue=fails") != 0 {
			t.Fatalf("delete by filter: %d", n.Deleted)
		}
		w := serve(f.rw, "POST", "/delete", strings.NewReader(`{"queue":["names"],"prefix":"user-"}`))
		check(t, w, "POST /delete with a body", http.StatusOK, &n)
		if n.Deleted != 3 || count(t, f.ro, "?queue=names") != 3 {
			t.Fatalf("delete by body: %d", n.Deleted)
		}
		call(t, f.rw, "POST", "/delete?queue=fails", http.StatusOK, &n)
		if n.Deleted != 0 {
			t.Fatalf("delete of nothing: %d", n.Deleted)
		}

		// A running entry is neither deleted nor retried.
		release := make(chan struct{})
		slow := must.Queue(t, f.s, "slow", sched.QueueConfig[string, string]{
			Handler: func(ctx context.Context, _ *sched.Job[string, string]) error {
				<-release
				return nil
			},
		})
		must.Add(t, slow, "s")
		synctest.Wait()
		if e := entry(t, f.ro, "slow", 1); e.State != "running" {
			t.Fatalf("slow/1: %+v", e)
		}
		errorOf(t, f.rw, "DELETE", "/entries/slow/1", nil, http.StatusConflict)
		errorOf(t, f.rw, "POST", "/entries/slow/1/retry", nil, http.StatusConflict)
		call(t, f.rw, "POST", "/delete?queue=slow", http.StatusOK, &n)
		if n.Deleted != 0 {
			t.Fatalf("deleted %d running entries", n.Deleted)
		}
		close(release)
		synctest.Wait()
		call(t, f.rw, "DELETE", "/entries/slow/1", http.StatusOK, &n)
		if !strings.Contains(f.log.String(), `msg="schedhttp: delete" queue=ints id=5 err=<nil>`) {
			t.Errorf("delete not logged:\n%s", f.log)
		}
	})
}

func TestPauseResume(t *testing.T) {
	run(t, func(t *testing.T, f *fixture) {
		var got struct {
			Queue  string `json:"queue"`
			Paused bool   `json:"paused"`
		}
		call(t, f.rw, "POST", "/queues/ints/resume", http.StatusOK, &got)
		if got.Queue != "ints" || got.Paused {
			t.Fatalf("resume: %+v", got)
		}
		synctest.Wait()
		if n := count(t, f.ro, "?queue=ints&state=succeeded"); n != 30 {
			t.Fatalf("after resume: %d succeeded", n)
		}
		call(t, f.rw, "POST", "/queues/ints/pause", http.StatusOK, &got)
		if !got.Paused {
			t.Fatalf("pause: %+v", got)
		}
		must.Add(t, f.ints, 31)
		synctest.Wait()
		var q schedhttp.QueueSummary
		call(t, f.ro, "GET", "/queues/ints", http.StatusOK, &q)
		if !q.Paused || q.Counts.Pending != 1 || q.Succeeded != 30 {
			t.Fatalf("paused ints: %+v", q)
		}
		errorOf(t, f.rw, "POST", "/queues/nope/pause", nil, http.StatusNotFound)
		errorOf(t, f.rw, "POST", "/queues/nope/resume", nil, http.StatusNotFound)
	})
}

func TestDisableEnable(t *testing.T) {
	run(t, func(t *testing.T, f *fixture) {
		var got struct {
			Queue    string   `json:"queue"`
			ID       sched.ID `json:"id"`
			Disabled bool     `json:"disabled"`
		}
		call(t, f.rw, "POST", "/entries/orders/1/disable", http.StatusOK, &got)
		if got.Queue != "orders" || got.ID != 1 || !got.Disabled || !entry(t, f.ro, "orders", 1).Disabled {
			t.Fatalf("disable: %+v", got)
		}
		call(t, f.rw, "POST", "/queues/orders/resume", http.StatusOK, nil)
		synctest.Wait()
		if e := entry(t, f.ro, "orders", 1); e.State != "pending" {
			t.Fatalf("a disabled entry ran: %+v", e)
		}
		call(t, f.rw, "POST", "/entries/orders/1/enable", http.StatusOK, &got)
		synctest.Wait()
		if got.Disabled || entry(t, f.ro, "orders", 1).State != "succeeded" {
			t.Fatalf("enable: %+v", got)
		}
		errorOf(t, f.rw, "POST", "/entries/fails/1/disable", nil, http.StatusConflict)
		errorOf(t, f.rw, "POST", "/entries/orders/99/disable", nil, http.StatusNotFound)
		errorOf(t, f.rw, "POST", "/entries/nope/1/enable", nil, http.StatusNotFound)
	})
}

// A payload that cannot be encoded is replaced by a note; its entry and
// the others are listed, and the document stays valid.
func TestUnencodablePayloads(t *testing.T) {
	run(t, func(t *testing.T, f *fixture) {
		p := page(t, f.ro, "/entries?queue=odd&payloads=true")
		if len(p.Entries) != 8 || p.Error != "" {
			t.Fatalf("%d entries, error %q", len(p.Entries), p.Error)
		}
		want := []struct{ payload, err string }{
			{`{"N":1,"V":42}`, ""},
			{"", "unsupported type: chan int"},
			{"", "unsupported type: func()"},
			{"", "unsupported value: NaN"},
			{"", "MarshalJSON panicked: boom"},
			{"", "no JSON for you"},
			{"", "invalid character"},
			{`{"N":8,"V":"fine"}`, ""},
		}
		for i, e := range p.Entries {
			w := want[i]
			if string(e.Payload) != w.payload || (w.err == "") != (e.PayloadError == "") || !strings.Contains(e.PayloadError, w.err) {
				t.Errorf("odd/%d: payload %s, error %q; want %s, %q", e.ID, e.Payload, e.PayloadError, w.payload, w.err)
			}
		}
		for _, e := range page(t, f.ro, "/entries?queue=odd").Entries {
			if e.Payload != nil || e.PayloadError != "" {
				t.Errorf("odd/%d listed without payloads: %+v", e.ID, e)
			}
		}
		if e := entry(t, f.ro, "odd", 5); e.Payload != nil || !strings.Contains(e.PayloadError, "panicked") || e.State != "pending" {
			t.Errorf("get odd/5: %+v", e)
		}
		if !strings.Contains(f.log.String(), "payload not encoded") {
			t.Errorf("not logged:\n%s", f.log)
		}
	})
}

// cancelWriter cancels the request after its n-th write.
type cancelWriter struct {
	http.ResponseWriter
	n      int
	cancel context.CancelFunc
}

func (w *cancelWriter) Write(p []byte) (int, error) {
	if w.n--; w.n == 0 {
		w.cancel()
	}
	return w.ResponseWriter.Write(p)
}

func TestCancelledRequest(t *testing.T) {
	run(t, func(t *testing.T, f *fixture) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		for _, target := range []string{"/entries", "/entries?queue=ints", "/count?prefix=1", "/count?queue=ints&from=2000-01-01T00:00:00Z"} {
			w := newRecorder()
			f.ro.ServeHTTP(w, newRequest("GET", target).WithContext(ctx))
			if msg := errorOf(t, replay(w), "GET", target, nil, http.StatusServiceUnavailable); !strings.Contains(msg, "context canceled") {
				t.Errorf("%s: %q", target, msg)
			}
		}

		// Cancelled after the first entry was written: the listing stops
		// there, and the page says why and where to resume.
		ctx, cancel = context.WithCancel(context.Background())
		defer cancel()
		w := newRecorder()
		f.ro.ServeHTTP(&cancelWriter{w, 2, cancel}, newRequest("GET", "/entries?queue=ints").WithContext(ctx))
		var p schedhttp.Page
		check(t, w, "cancelled listing", http.StatusOK, &p)
		if len(p.Entries) != 1 || p.Next != "ints/1" || !strings.Contains(p.Error, "context canceled") {
			t.Fatalf("cancelled listing: %d entries, next %q, error %q", len(p.Entries), p.Next, p.Error)
		}
	})
}

func TestCrossOriginWrites(t *testing.T) {
	run(t, func(t *testing.T, f *fixture) {
		for _, hdr := range []http.Header{
			{"Sec-Fetch-Site": {"cross-site"}},
			{"Origin": {"https://evil.example"}},
		} {
			r := newRequest("POST", "/queues/ints/resume")
			r.Header = hdr
			w := newRecorder()
			f.rw.ServeHTTP(w, r)
			if msg := errorOf(t, replay(w), "POST", "/queues/ints/resume", nil, http.StatusForbidden); !strings.Contains(msg, "cross-origin") {
				t.Errorf("%v: %q", hdr, msg)
			}
		}
		if must.Counts(t, f.ints).Pending != 30 {
			t.Fatal("a cross-origin write went through")
		}
		r := newRequest("POST", "/queues/ints/pause")
		r.Header.Set("Sec-Fetch-Site", "same-origin")
		w := newRecorder()
		f.rw.ServeHTTP(w, r)
		check(t, w, "same-origin write", http.StatusOK, nil)
		// Reads are never refused.
		r = newRequest("GET", "/count")
		r.Header.Set("Sec-Fetch-Site", "cross-site")
		w = newRecorder()
		f.rw.ServeHTTP(w, r)
		check(t, w, "cross-origin read", http.StatusOK, nil)
	})
}

func TestNewRefusesBadOptions(t *testing.T) {
	t.Parallel()
	s, err := sched.New(sched.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := schedhttp.New(nil, schedhttp.Options{}); !errors.Is(err, sched.ErrInvalid) {
		t.Errorf("nil Inspector: %v", err)
	}
	for _, o := range []schedhttp.Options{{MaxPage: -1}, {MaxPage: 1001}, {MaxBody: -1}} {
		if _, err := schedhttp.New(s.Inspector(), o); !errors.Is(err, sched.ErrInvalid) {
			t.Errorf("%+v: %v", o, err)
		}
	}
	if _, err := schedhttp.New(s.Inspector(), schedhttp.Options{MaxPage: 1000}); err != nil {
		t.Error(err)
	}
}

// New refuses an Inspector not made by Scheduler.Inspector (the zero
// Inspector, or that of a Scheduler not made by sched.New), whose every
// call fails: its handler used to answer every request 400, as if the
// client had asked wrongly.
func TestNewRefusesInspectorNotMade(t *testing.T) {
	t.Parallel()
	for name, insp := range map[string]*sched.Inspector{
		"zero Inspector":   {},
		"zero Scheduler's": new(sched.Scheduler).Inspector(),
		"nil Scheduler's":  (*sched.Scheduler)(nil).Inspector(),
	} {
		h, err := schedhttp.New(insp, schedhttp.Options{})
		if !errors.Is(err, sched.ErrInvalid) || h != nil {
			t.Errorf("%s: %v, %v", name, h, err)
		}
	}
}

// A Handler not made by New (the zero Handler, or a nil *Handler) answers
// every request 500 with a JSON error saying so. It used to panic on a
// nil pointer, or answer 413 to any body (its MaxBody was 0).
func TestHandlerNotMade(t *testing.T) {
	t.Parallel()
	for name, h := range map[string]*schedhttp.Handler{"zero": {}, "nil": nil} {
		for _, c := range []struct{ method, target, body string }{
			{"GET", "/queues", ""},
			{"GET", "/entries?queue=x", ""},
			{"POST", "/delete", `{"queue":["x"]}`},
			{"DELETE", "/entries/x/1", ""},
			{"GET", "/nope", ""},
		} {
			var body io.Reader
			if c.body != "" {
				body = strings.NewReader(c.body)
			}
			w := func() (w *httptest.ResponseRecorder) {
				defer func() {
					if p := recover(); p != nil {
						t.Errorf("%s Handler: %s %s panicked: %v", name, c.method, c.target, p)
					}
				}()
				return serve(h, c.method, c.target, body)
			}()
			if w == nil {
				continue
			}
			if msg := errorOf(t, replay(w), c.method, c.target, nil, http.StatusInternalServerError); !strings.Contains(msg, "not made by New") {
				t.Errorf("%s Handler: %s %s: %q", name, c.method, c.target, msg)
			}
		}
	}
}
