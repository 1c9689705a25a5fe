package sched_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/internal/logbuf"
	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// brokenClock tells the time until it breaks; from then on its Now,
// NewTimer and its timers' methods all panic.
type brokenClock struct{ broken atomic.Bool }

func (c *brokenClock) check(in string) {
	if c.broken.Load() {
		panic("clock bug in " + in)
	}
}

func (c *brokenClock) Now() time.Time {
	c.check("Now")
	return time.Now()
}

func (c *brokenClock) NewTimer() sched.Timer {
	c.check("NewTimer")
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &brokenTimer{c: c, t: t}
}

type brokenTimer struct {
	c *brokenClock
	t *time.Timer
}

func (t *brokenTimer) C() <-chan time.Time   { t.c.check("Timer.C"); return t.t.C }
func (t *brokenTimer) Reset(d time.Duration) { t.c.check("Timer.Reset"); t.t.Reset(d) }
func (t *brokenTimer) Stop()                 { t.c.check("Timer.Stop"); t.t.Stop() }

// A Clock that starts to panic takes nothing down: not the Add that reads
// it, not the workers, the loops or the timekeeper. The panic is logged
// once, and jobs added then, delayed ones too, run on the system clock's
// time.
func TestAPanickingClockTakesNothingDown(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var log logbuf.Buffer
		clock := new(brokenClock)
		s := newScheduler(t, sched.Config{Workers: 2, Clock: clock, Logger: log.Logger()})
		var runs atomic.Int64
		ran := make(map[int]time.Time)
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Handler: func(_ context.Context, j *sched.Job[int, int]) error {
			ran[j.Payload] = time.Now() // one worker at a time: the bubble's goroutines are durably blocked between runs
			runs.Add(1)
			return nil
		}, MaxConcurrency: 1})
		t0 := time.Now()
		must.Add(t, q, 1)
		must.Add(t, q, 2, sched.After(time.Second))
		synctest.Wait()
		if runs.Load() != 1 {
			t.Fatalf("%d runs before the clock broke, want 1", runs.Load())
		}

		clock.broken.Store(true)
		must.Add(t, q, 3)
		must.Add(t, q, 4, sched.After(3*time.Second))
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if runs.Load() != 4 {
			t.Fatalf("%d runs, want 4: every job runs after the clock broke", runs.Load())
		}
		for id, at := range map[int]time.Duration{2: time.Second, 4: 3 * time.Second} {
			if got := ran[id].Sub(t0); got != at {
				t.Errorf("job %d ran %v after the start, want %v", id, got, at)
			}
		}
		if n := strings.Count(log.String(), "the clock panicked"); n != 1 {
			t.Errorf("the broken clock logged %d times, want once:\n%s", n, log.String())
		}
		if !strings.Contains(log.String(), "clock bug in") || !strings.Contains(log.String(), "stack=") {
			t.Errorf("the log lacks the panic's value or stack:\n%s", log.String())
		}
		if now := s.Clock().Now(); !now.Equal(time.Now()) {
			t.Errorf("the scheduler's clock tells %v, want the system clock's %v", now, time.Now())
		}
	})
}

// A timer armed on a clock that then breaks fires when it was due, on the
// system clock; timers made after the break are the system clock's.
func TestATimerOfABrokenClockFiresOnTime(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		clock := new(brokenClock)
		s, err := sched.New(sched.Config{Clock: clock, Logger: new(logbuf.Buffer).Logger()})
		if err != nil {
			t.Fatal(err)
		}
		armed := s.Clock().NewTimer()
		armed.Reset(2 * time.Second)
		time.Sleep(time.Second)
		clock.broken.Store(true)
		wait := func(what string, tm sched.Timer, want time.Duration) {
			t.Helper()
			t0 := time.Now()
			<-tm.C()
			if got := time.Since(t0); got != want {
				t.Errorf("%s fired after %v, want %v", what, got, want)
			}
		}
		wait("the timer armed before the break", armed, time.Second)
		armed.Reset(3 * time.Second)
		wait("the same timer armed again", armed, 3*time.Second)
		later := s.Clock().NewTimer()
		later.Reset(4 * time.Second)
		wait("a timer made after the break", later, 4*time.Second)
		armed.Stop()
		later.Stop()
	})
}
