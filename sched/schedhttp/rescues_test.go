package schedhttp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
	"github.com/jobkit/jobkit/sched/schedhttp"
)

// An entry is served with its rescues, as sched.Summary holds them: the
// lapsed leases that, past MaxRescues, poison it. Entry had Attempts,
// Reruns and Snoozes but not Rescues, so an operator asking why an entry
// was poisoned, or how close one is to it, could not tell over HTTP.
func TestEntryCarriesItsRescues(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := must.New(t, sched.Config{Workers: 1})
		in := s.Inspector()
		in.EnableRescue()
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Lease: time.Second, MaxRescues: 5,
			Handler: func(ctx context.Context, _ *sched.Job[int, int]) error {
				<-ctx.Done() // hangs until rescued or stopped
				return ctx.Err()
			},
		})
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer func() {
			sctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			if err := s.StopAndCancel(sctx); err != nil {
				t.Error(err)
			}
		}()
		id := must.Add(t, q, 1)
		synctest.Wait() // running
		time.Sleep(2 * time.Second)
		if rs, err := in.Reap(ctx, time.Now(), 0); err != nil || len(rs) != 1 {
			t.Fatalf("Reap = %+v, %v; want one rescue", rs, err)
		}
		synctest.Wait()
		sum, err := in.Get(ctx, "q", id)
		if err != nil || sum.Rescues != 1 {
			t.Fatalf("Get = %+v, %v; want Rescues 1", sum, err)
		}
		h := newHandler(t, in, schedhttp.Options{})
		w := serve(h, "GET", "/entries/q/"+itoa(id), nil)
		var m map[string]any
		if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &m) != nil {
			t.Fatalf("GET: %d %s", w.Code, w.Body)
		}
		if m["rescues"] != 1.0 {
			t.Errorf("GET /entries/q/%d: rescues %v, want 1: %s", id, m["rescues"], w.Body)
		}
	})
}
