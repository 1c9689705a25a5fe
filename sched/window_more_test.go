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

// breaksClock tells a far-future time until broken is set, then panics:
// the scheduler then tells the time by the system clock, centuries before
// its epoch.
type breaksClock struct {
	sched.Clock
	base   time.Time
	made   time.Time
	broken atomic.Bool
}

func (c *breaksClock) Now() time.Time {
	if c.broken.Load() {
		panic("review: the clock broke")
	}
	return c.base.Add(time.Since(c.made))
}

// A Clock that starts in the year 2900 and then breaks leaves the scheduler
// on the system clock, nine centuries before its epoch: runs still finish,
// release their worker, and Stop returns. (From mutation testing: window.add took
// negative nanoseconds, indexed its buckets with a negative index and
// panicked in finishLocked, before the batch's permit was released.)
func TestAClockThatBreaksFarOnLeavesRunsFinishing(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		clock := &breaksClock{
			Clock: must.New(t, sched.Config{}).Clock(),
			base:  time.Date(2900, 1, 1, 0, 0, 0, 0, time.UTC),
			made:  time.Now(),
		}
		s := must.New(t, sched.Config{Workers: 1, Logger: quiet, Clock: clock})
		var runs atomic.Int32
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Handler: func(context.Context, *sched.Job[int, int]) error { runs.Add(1); return nil },
		})
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		must.Add(t, q, 1)
		synctest.Wait()
		clock.broken.Store(true)
		must.Add(t, q, 2)
		synctest.Wait()
		must.Add(t, q, 3)
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := runs.Load(); n != 3 {
			t.Errorf("%d runs, want 3: a run on the broken clock did not release its worker", n)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		if err := s.StopAndCancel(ctx); err != nil {
			t.Errorf("StopAndCancel = %v, want nil", err)
		}
	})
}
