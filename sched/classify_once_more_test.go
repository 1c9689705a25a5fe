package sched_test

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// A failed run is classified once, whatever ends the worker's goroutine
// after the run was settled: the backend's Settle, or the work-duration
// metric observed once the batch's lock is let go. The retry policy's
// Delay, the user's code, is called once. (From mutation testing: kills run's way out
// classifying a run already settled, when it holds the lock or when the
// worker's copy of the run's start is not cleared after its settlement.)
func TestARunSettledBeforeTheWorkerEndsIsClassifiedOnce(t *testing.T) {
	t.Parallel()
	for _, by := range []string{"Settle", "metric"} {
		t.Run(by, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				cfg := sched.Config{Workers: 1, Logger: quiet}
				qcfg := sched.QueueConfig[int, int]{
					Handler: func(context.Context, *sched.Job[int, int]) error { return errors.New("fails") },
				}
				switch by {
				case "Settle":
					qcfg.Backend = &settleExits{sched.NewMemory[int, int]()}
				case "metric":
					p := &panicky{which: "duration", fault: runtime.Goexit}
					p.armed.Store(true)
					cfg.Metrics = p
				}
				var delays atomic.Int32
				qcfg.Retry = &sched.RetryPolicy{MaxRetries: 1, Delay: func(int, error) time.Duration {
					delays.Add(1)
					return time.Hour
				}}
				s := newScheduler(t, cfg)
				q := must.Queue(t, s, "q", qcfg)
				must.Add(t, q, 1)
				time.Sleep(time.Minute)
				synctest.Wait()
				if c := must.Counts(t, q); c.Delayed != 1 {
					t.Errorf("counts %+v, want the run delayed for its retry", c)
				}
				if n := delays.Load(); n != 1 {
					t.Errorf("Delay called %d times for one failed run, want 1", n)
				}
			})
		})
	}
}
