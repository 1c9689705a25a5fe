package recovery_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/recovery"
	"github.com/jobkit/jobkit/sched"
)

// deadClock tells the time by time.Now until it panics (once broken is
// set); its timers never fire, as those of a fake or remote clock that has
// died.
type deadClock struct{ broken atomic.Bool }

type deadTimer struct{ c chan time.Time }

func (t *deadTimer) C() <-chan time.Time { return t.c }
func (t *deadTimer) Reset(time.Duration) {}
func (t *deadTimer) Stop()               {}

func (c *deadClock) Now() time.Time {
	if c.broken.Load() {
		panic("clock died")
	}
	return time.Now()
}
func (c *deadClock) NewTimer() sched.Timer { return &deadTimer{c: make(chan time.Time)} }

// A sched.Config.Clock that panics is replaced by the system clock, and a
// timer of the broken clock may never fire again: the reaper's loop, which
// waits on one, moves to a timer of the system clock (Scheduler.
// ClockBroken) and goes on rescuing. It waited for ever, once.
func TestReaperGoesOnWhenTheClockBreaks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		clk := &deadClock{}
		s, err := sched.New(sched.Config{Workers: 2, Loops: 1, Logger: quiet, Clock: clk})
		must(t, err)
		gate := make(chan struct{})
		q, err := sched.NewQueue(s, "q", sched.QueueConfig[int, int]{Lease: time.Second,
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				if j.Rescues == 0 {
					<-gate // hangs, ignoring ctx
				}
				return nil
			}})
		must(t, err)
		r, err := recovery.New(s, recovery.Config{Interval: 100 * time.Millisecond, Grace: 100 * time.Millisecond, Logger: quiet})
		must(t, err)
		must(t, s.Start(ctx))
		must(t, r.Start(ctx))
		synctest.Wait() // the reaper waits on its first timer
		clk.broken.Store(true)
		_ = s.Clock().Now() // the guard catches the panic: system clock from now on
		add(t, q, 1)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if st := r.Stats(); st.Rescued == 0 {
			t.Errorf("no rescue 10s after a run's 1s lease lapsed (reaper Interval 100ms): %+v", st)
		}
		close(gate)
		must(t, r.Stop(ctx))
		must(t, s.Stop(ctx))
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
