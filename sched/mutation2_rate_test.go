package sched_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// Burst defaults to the ceiling of Rate: a queue limited to 2.5 runs a
// second starts 3 at once, then no more until a token comes, 0.4 s later.
// (From mutation testing: a default burst of the floor of Rate survived
// every test.)
func TestTheDefaultBurstIsTheCeilingOfTheRate(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 4, Logger: quiet})
		var runs atomic.Int64
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Rate: 2.5,
			Handler: func(context.Context, *sched.Job[int, int]) error {
				runs.Add(1)
				return nil
			},
		})
		for k := 1; k <= 10; k++ {
			must.Add(t, q, k)
		}
		synctest.Wait()
		if n := runs.Load(); n != 3 {
			t.Errorf("%d runs at once, want a burst of 3 (the ceiling of 2.5)", n)
		}
		time.Sleep(400 * time.Millisecond)
		synctest.Wait()
		if n := runs.Load(); n != 4 {
			t.Errorf("%d runs after 0.4 s, want 4", n)
		}
	})
}
