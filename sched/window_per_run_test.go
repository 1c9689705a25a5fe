package sched_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// QueueSummary documents Succeeded as the runs that ended over the last
// minute, and Ended as the runs that ended since the scheduler was made.
// Runs of one batch (one worker, the default BatchSize) end one after
// another: each must be counted when it ends, not when its batch does.
func TestSummaryCountsEachRunWhenItEnds(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Handler: func(ctx context.Context, _ *sched.Job[int, int]) error {
				time.Sleep(40 * time.Second)
				return nil
			},
		})
		q.Pause() // the three entries go in one batch
		for i := 1; i <= 3; i++ {
			must.Add(t, q, i)
		}
		q.Resume()
		// Runs end at 40s, 80s and 120s.
		time.Sleep(90 * time.Second)
		synctest.Wait()
		c := must.Counts(t, q)
		qs := summary(t, s, "q")
		if c.Succeeded != 2 {
			t.Fatalf("counts %+v: want 2 succeeded at 90s", c)
		}
		// The last minute, (30s, 90s], holds the runs that ended at 40s and 80s.
		if qs.Succeeded != 2 || qs.Ended != 2 {
			t.Errorf("at 90s, with runs ended at 40s and 80s: Summary Succeeded %d, Ended %d; want 2, 2", qs.Succeeded, qs.Ended)
		}
		time.Sleep(40 * time.Second) // 130s: the batch ended at 120s
		synctest.Wait()
		// (70s, 130s] holds the runs that ended at 80s and 120s, not the one at 40s.
		if qs := summary(t, s, "q"); qs.Succeeded != 2 || qs.Ended != 3 {
			t.Errorf("at 130s, with runs ended at 40s, 80s and 120s: Summary Succeeded %d, Ended %d; want 2, 3", qs.Succeeded, qs.Ended)
		}
	})
}
