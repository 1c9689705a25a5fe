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

// A queue whose runs are long takes smaller batches, about a millisecond's
// worth, so that its entries spread over the workers: once a batch of runs
// of 10 ms has ended, 16 entries added at once run on 8 workers, 8 at a
// time, in 20 ms, where one batch of 16 ran them one after another on one
// worker for 160 ms. Runs of no time keep their batches of BatchSize.
func TestLongRunsTakeSmallerBatches(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := must.New(t, sched.Config{Workers: 8, Logger: quiet})
		var now, most atomic.Int64
		done := make(chan struct{}, 32)
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Handler: func(context.Context, *sched.Job[int, int]) error {
				n := now.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				time.Sleep(10 * time.Millisecond) // the run's work, in the bubble's time
				now.Add(-1)
				done <- struct{}{}
				return nil
			},
		})
		start(t, s, nil)
		wave := func(from int) time.Duration {
			most.Store(0)
			q.Pause() // all 16 pending before a loop looks
			for i := range 16 {
				must.Add(t, q, from+i)
			}
			t0 := time.Now()
			q.Resume()
			for range 16 {
				<-done
			}
			return time.Since(t0)
		}
		// The first batch knows nothing of the runs: it takes BatchSize.
		if d := wave(0); most.Load() != 1 || d < 160*time.Millisecond {
			t.Fatalf("first wave: %d at once, in %v; want one batch of 16, one at a time", most.Load(), d)
		}
		if d := wave(16); most.Load() != 8 || d > 25*time.Millisecond {
			t.Errorf("second wave: %d at once, in %v; want 8 at once (the workers), in about 20 ms", most.Load(), d)
		}
	})
}
