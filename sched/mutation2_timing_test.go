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

// An entry added to run at the present instant (At(now)) runs at once, as
// one added without a time does. (From mutation testing: Memory.Add taking
// a RunAt equal to Now as a delay survived every test: the entry waited,
// delayed, with no promotion due, and never ran on a quiet queue.)
func TestAnEntryAddedAtTheCurrentInstantRunsAtOnce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
		var runs atomic.Int64
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Handler: func(context.Context, *sched.Job[int, int]) error { runs.Add(1); return nil },
		})
		must.Add(t, q, 1, sched.At(time.Now())) // the bubble's clock stands still: RunAt is Now
		synctest.Wait()
		if n := runs.Load(); n != 1 {
			t.Errorf("%d runs, want the entry added at the current instant run at once (counts %+v)", n, must.Counts(t, q))
		}
	})
}

// With AutoRenew, the reaper renews the lease of the run in progress
// before it looks for lapsed ones: a run four times longer than its lease
// is never rescued. (From mutation testing: renewing only the claims after
// the running one survived every test.)
func TestAutoRenewKeepsALongRunLeased(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
		in := s.Inspector()
		in.EnableRescue()
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Lease: time.Second, AutoRenew: true,
			Handler: func(context.Context, *sched.Job[int, int]) error {
				time.Sleep(4 * time.Second)
				return nil
			},
		})
		id := must.Add(t, q, 1)
		synctest.Wait() // running
		for range 7 {
			time.Sleep(600 * time.Millisecond)
			if rs, err := in.Reap(ctx, time.Now(), 0); err != nil || len(rs) != 0 {
				t.Fatalf("Reap = %+v, %v; want no rescue: the run's lease is renewed", rs, err)
			}
		}
		synctest.Wait()
		if e, err := q.Get(ctx, id); err != nil || e.State != sched.StateSucceeded || e.Rescues != 0 {
			t.Errorf("entry %v, rescues %d (%v); want succeeded, never rescued", e.State, e.Rescues, err)
		}
	})
}
