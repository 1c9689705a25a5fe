package sched_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// A queue capped at c runs min(c, workers) entries at once while it has
// them, whatever its batch size: the cap's claims are spread over as many
// workers. Before, one loop took all c into one batch, which one worker
// ran one after another: a cap of 3 with the default batch of 16 ran one
// entry at a time.
func TestACappedQueueRunsUpToItsCapAtOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                string
		workers, cap, batch int
		want                int64
	}{
		{"cap 3 of 8 workers, default batch", 8, 3, 0, 3},
		{"cap 2 of 2 workers, batch 2", 2, 2, 2, 2},
		{"cap 8 of 4 workers, batch 16", 4, 8, 16, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				s := must.New(t, sched.Config{Workers: tc.workers, Logger: quiet})
				release := make(chan struct{})
				var now, most atomic.Int64
				q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
					MaxConcurrency: tc.cap, BatchSize: tc.batch,
					Handler: func(context.Context, *sched.Job[int, int]) error {
						n := now.Add(1)
						for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
						}
						<-release
						now.Add(-1)
						return nil
					},
				})
				for i := range 20 {
					must.Add(t, q, i)
				}
				start(t, s, nil)
				synctest.Wait()
				if n := now.Load(); n != tc.want {
					t.Errorf("%d entries running at once, want %d", n, tc.want)
				}
				close(release)
				synctest.Wait()
				if c := must.Counts(t, q); c.Succeeded != 20 || most.Load() > int64(tc.cap) {
					t.Errorf("counts %+v, at most %d at once; want 20 succeeded, never more than the cap %d", c, most.Load(), tc.cap)
				}
			})
		})
	}
}
