package sched_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// A retry policy whose Delay ends its goroutine (runtime.Goexit) strands
// nothing: the entry fails, saying why, the worker is replaced, the other
// jobs run and Stop returns.
func TestGoexitInDelayFailsTheEntry(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 1})
		var runs atomic.Int64
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				runs.Add(1)
				if j.Payload == 1 {
					return errors.New("fails")
				}
				return nil
			},
			Retention: &sched.Retention{Failed: time.Hour, MaxFailed: 10, Succeeded: time.Hour, MaxSucceeded: 10},
			Retry: &sched.RetryPolicy{MaxRetries: 3, Delay: func(int, error) time.Duration {
				runtime.Goexit()
				return 0
			}},
		})
		id := must.Add(t, q, 1)
		must.Add(t, q, 2)
		synctest.Wait()
		e, err := q.Get(context.Background(), id)
		if err != nil || e.State != sched.StateFailed || runs.Load() != 2 || len(e.Errors) == 0 || !strings.Contains(e.Errors[0].Message, "Delay") {
			t.Errorf("entry %+v, %v after %d runs; want failed, saying the Delay failed, and the other run", e, err, runs.Load())
		}
		if c := must.Counts(t, q); c.Live() != 0 {
			t.Errorf("counts %+v, want nothing live", c)
		}
	})
}
