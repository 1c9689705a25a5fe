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

// A rate-limited queue starts no more entries than its token bucket holds,
// when the bucket holds a fraction of a token more than a whole number:
// at a rate of 1 a second and a burst of 2, two runs empty the bucket, and
// 1.5 s later one more may start, not two. (From mutation testing:
// dispatch sizing the batch by the ceiling of the tokens instead of their
// floor survived every test: the batch then asked for more tokens than the
// bucket held, AllowN refused and took none, and the queue ran past its
// rate. TestRateLimit never sees a fraction above 1: its loops wake when
// the bucket reaches a whole token.)
func TestARateWithAFractionOfATokenLeftStartsOnlyTheWholeTokens(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 4, Logger: quiet})
		var runs atomic.Int64
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Rate: 1, Burst: 2, BatchSize: 16,
			Handler: func(context.Context, *sched.Job[int, int]) error { runs.Add(1); return nil },
		})
		must.Add(t, q, 1)
		must.Add(t, q, 2)
		synctest.Wait()
		if n := runs.Load(); n != 2 {
			t.Fatalf("%d runs of a full bucket of 2, want 2", n)
		}
		time.Sleep(1500 * time.Millisecond) // the bucket refills to 1.5 tokens
		for k := 3; k <= 5; k++ {
			must.Add(t, q, k)
		}
		synctest.Wait()
		if n := runs.Load(); n != 3 {
			t.Errorf("%d runs in 1.5 s at a rate of 1/s with a burst of 2, want 3", n)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if n := runs.Load(); n != 4 {
			t.Errorf("%d runs in 2.5 s at a rate of 1/s with a burst of 2, want 4", n)
		}
	})
}
