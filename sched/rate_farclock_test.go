package sched_test

import (
	"context"
	"testing"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// A rate limit goes on refilling once the Clock has moved past the instants
// the scheduler can hold (about 190 years after its first reading, as a
// test's Clock that jumps does), where every later instant is the same one
// to it: three entries of a queue of 100 starts a second, with bursts of
// one, run within a few hundredths of a second. Before, the loops asked
// the bucket at that saturated instant, where no time passed after the
// first start: the queue never became ready again, and the loop, told to
// wait until a saturated instant that had already come, spun without
// sleeping.
func TestARateLimitRefillsOnceTheClockIsPastTheScheduledRange(t *testing.T) {
	t.Parallel()
	clock := new(jumpingClock)
	s := must.New(t, sched.Config{Workers: 1, Loops: 1, Logger: quiet, Clock: clock})
	ran := make(chan int, 3)
	q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Rate: 100, Burst: 1, BatchSize: 1,
		Handler: func(_ context.Context, j *sched.Job[int, int]) error { ran <- j.Key; return nil }})
	start(t, s, nil)
	clock.jumps.Store(1) // 200 years on
	fill(t, q, 0, 3)
	timeout := time.After(2 * time.Second) // a bound on a failure, not a synchronisation
	for i := range 3 {
		select {
		case <-ran:
		case <-timeout:
			t.Fatalf("%d of 3 runs, and no more within 2 seconds, at a rate of 100 a second", i)
		}
	}
}
