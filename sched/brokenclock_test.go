package sched_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
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
// NewTimer and its timers' methods all panic. Its variants: ahead, added
// to the time it tells; once, which makes only its next Now panic; stuck,
// whose timers never fire; and nilTimer, whose NewTimer returns nil.
//
// Armed with exitAt = k, its k-th call from then on calls fault (if set)
// or ends the calling goroutine (runtime.Goexit), whichever goroutine and
// method it is.
type brokenClock struct {
	broken, once    atomic.Bool
	ahead           time.Duration
	stuck, nilTimer bool

	exitAt, calls atomic.Int64
	exitIn        atomic.Value // the method whose call ended its goroutine
	fault         func()
}

func (c *brokenClock) check(in string) {
	if c.broken.Load() || (in == "Now" && c.once.CompareAndSwap(true, false)) {
		panic("clock bug in " + in)
	}
	if k := c.exitAt.Load(); k > 0 && c.calls.Add(1) == k {
		c.exitIn.Store(in)
		if c.fault != nil {
			c.fault()
			return
		}
		runtime.Goexit()
	}
}

func (c *brokenClock) Now() time.Time {
	c.check("Now")
	return time.Now().Add(c.ahead)
}

func (c *brokenClock) NewTimer() sched.Timer {
	c.check("NewTimer")
	if c.nilTimer {
		return nil
	}
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &brokenTimer{c: c, t: t}
}

type brokenTimer struct {
	c *brokenClock
	t *time.Timer
}

func (t *brokenTimer) C() <-chan time.Time {
	t.c.check("Timer.C")
	if t.c.stuck {
		return nil
	}
	return t.t.C
}

func (t *brokenTimer) Reset(d time.Duration) { t.c.check("Timer.Reset"); t.t.Reset(d) }
func (t *brokenTimer) Stop()                 { t.c.check("Timer.Stop"); t.t.Stop() }

// guarded returns an unstarted scheduler on clock, logging into log: its
// Clock is clock, guarded.
func guarded(t *testing.T, clock sched.Clock, log *logbuf.Buffer) *sched.Scheduler {
	t.Helper()
	return must.New(t, sched.Config{Clock: clock, Logger: log.Logger()})
}

// waitFor waits for tm to fire, which must take want from now.
func waitFor(t *testing.T, what string, tm sched.Timer, want time.Duration) {
	t.Helper()
	t0 := time.Now()
	<-tm.C()
	if got := time.Since(t0); got != want {
		t.Errorf("%s fired after %v, want %v", what, got, want)
	}
}

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
		s := guarded(t, clock, new(logbuf.Buffer))
		armed := s.Clock().NewTimer()
		armed.Reset(2 * time.Second)
		time.Sleep(time.Second)
		clock.broken.Store(true)
		waitFor(t, "the timer armed before the break", armed, time.Second)
		armed.Reset(3 * time.Second)
		waitFor(t, "the same timer armed again", armed, 3*time.Second)
		later := s.Clock().NewTimer()
		later.Reset(4 * time.Second)
		waitFor(t, "a timer made after the break", later, 4*time.Second)
		armed.Stop()
		later.Stop()
	})
}

// A goroutine of the scheduler that waits on a timer of the clock when the
// clock breaks (a fake clock's timer, which will never fire) wakes and
// moves to the system clock: a delayed job runs on time.
func TestAWaitOnABrokenClocksTimerMovesToTheSystemClock(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		clock := &brokenClock{stuck: true}
		s := newScheduler(t, sched.Config{Workers: 1, Clock: clock, Logger: new(logbuf.Buffer).Logger()})
		ran := make(chan time.Time, 1)
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Handler: func(context.Context, *sched.Job[int, int]) error {
			ran <- time.Now()
			return nil
		}})
		t0 := time.Now()
		must.Add(t, q, 1, sched.After(5*time.Second))
		synctest.Wait() // the timekeeper waits on the stuck timer
		clock.broken.Store(true)
		s.Clock().Now() // breaks it
		time.Sleep(time.Minute)
		select {
		case at := <-ran:
			if d := at.Sub(t0); d != 5*time.Second {
				t.Errorf("the delayed job ran %v after its add, want 5s", d)
			}
		default:
			t.Fatal("the delayed job never ran: the timekeeper still waits on the broken clock's timer")
		}
	})
}

// A clock that panicked once is not trusted again, even if it would tell
// the time again; a clock whose NewTimer returns nil is broken as well.
func TestABrokenClockIsNotTrustedAgain(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		for _, c := range []*brokenClock{{ahead: time.Hour}, {ahead: time.Hour, nilTimer: true}} {
			var log logbuf.Buffer
			s := guarded(t, c, &log)
			if c.nilTimer {
				tm := s.Clock().NewTimer()
				tm.Reset(time.Second)
				waitFor(t, "the timer made in place of a nil one", tm, time.Second)
			} else {
				if got := s.Clock().Now(); !got.Equal(time.Now().Add(time.Hour)) {
					t.Fatalf("before the break the clock tells %v, want its own %v", got, time.Now().Add(time.Hour))
				}
				c.once.Store(true)
				s.Clock().Now()
			}
			if got := s.Clock().Now(); !got.Equal(time.Now()) {
				t.Errorf("nil timer %v: after the break the clock tells %v, want the system clock's %v", c.nilTimer, got, time.Now())
			}
			if n := strings.Count(log.String(), "the clock panicked"); n != 1 {
				t.Errorf("nil timer %v: the break logged %d times, want once:\n%s", c.nilTimer, n, log.String())
			}
		}
	})
}

// A timer stopped before the clock breaks does not fire on the system
// clock.
func TestAStoppedTimerStaysStoppedAcrossTheBreak(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		clock := new(brokenClock)
		s := guarded(t, clock, new(logbuf.Buffer))
		tm := s.Clock().NewTimer()
		tm.Reset(time.Second)
		tm.Stop()
		clock.broken.Store(true)
		c := tm.C()
		time.Sleep(time.Minute)
		select {
		case <-c:
			t.Error("a stopped timer fired after the clock broke")
		default:
		}
	})
}

// A Clock that ends the goroutine that calls it (runtime.Goexit), which no
// deferred call can stop, strands nothing, whichever of the scheduler's
// goroutines it ends: a scheduling loop (holding a reserved worker, a
// permit), a worker (between runs, or with a run in progress), the
// timekeeper, or an Add. The goroutine is replaced, the clock counts as
// broken from then on, every accepted job runs once, delayed ones too,
// nothing stays claimed, and Stop returns with no goroutine left
// (synctest.Test fails if one is). The sweep ends the k-th call of the
// clock after the adds begin, for every k up to the calls it gets. One
// loop and one worker (one governor slot) make anything lost a stall:
// the internal governor reads the clock too, as it charges a permit.
func TestAClockThatEndsItsGoroutineStrandsNothing(t *testing.T) {
	t.Parallel()
	for k := int64(1); ; k++ {
		var calls int64
		t.Run(fmt.Sprint(k), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var log logbuf.Buffer
				clock := new(brokenClock)
				s := must.New(t, sched.Config{Workers: 1, Loops: 1, Clock: clock, Logger: log.Logger()})
				var runs atomic.Int64
				q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Handler: func(_ context.Context, j *sched.Job[int, int]) error {
					runs.Add(1)
					if j.Payload%5 == 0 && j.Attempt == 1 {
						return errors.New("fails once")
					}
					return nil
				}, Retry: &sched.RetryPolicy{MaxRetries: 1, Base: time.Second}, BatchSize: 4})
				if err := s.Start(context.Background()); err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				clock.exitAt.Store(k)
				var accepted, fails atomic.Int64
				for i := range 20 {
					// Each add on a goroutine of its own, which the clock
					// may end before the entry is stored.
					go func() {
						var opts []sched.AddOption
						if i%3 == 0 {
							opts = append(opts, sched.After(time.Second))
						}
						if _, ok, err := q.Add(context.Background(), i, opts...); err == nil && ok {
							accepted.Add(1)
							if i%5 == 0 {
								fails.Add(1)
							}
						}
					}()
				}
				time.Sleep(time.Minute)
				synctest.Wait()
				calls = clock.calls.Load()
				clock.exitAt.Store(0)
				c := must.Counts(t, q)
				if want := accepted.Load() + fails.Load(); runs.Load() != want || c.Live() != 0 {
					t.Errorf("%d runs, counts %+v; want %d runs of the %d accepted jobs and nothing live", runs.Load(), c, want, accepted.Load())
				}
				if k <= calls && !strings.Contains(log.String(), "runtime.Goexit") {
					t.Errorf("the clock ended a goroutine in %v, and the log does not say so:\n%s", clock.exitIn.Load(), log.String())
				}
				if err := s.Stop(context.Background()); err != nil {
					t.Error(err)
				}
			})
		})
		if k > calls || t.Failed() {
			break
		}
	}
}

// ClockBroken is closed when Config.Clock breaks, and never with the
// system clock.
func TestClockBrokenIsClosedByTheBreak(t *testing.T) {
	t.Parallel()
	if ch := must.New(t, sched.Config{}).ClockBroken(); ch != nil {
		t.Error("ClockBroken of the system clock is not nil")
	}
	var log logbuf.Buffer
	c := &brokenClock{}
	s := guarded(t, c, &log)
	select {
	case <-s.ClockBroken():
		t.Fatal("ClockBroken closed before the clock broke")
	default:
	}
	c.once.Store(true)
	s.Clock().Now()
	select {
	case <-s.ClockBroken():
	default:
		t.Error("ClockBroken not closed once the clock broke")
	}
	if ch := (*sched.Scheduler)(nil).ClockBroken(); ch != nil {
		t.Error("ClockBroken of a nil Scheduler is not nil")
	}
}
