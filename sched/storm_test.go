package sched_test

import (
	"context"
	"log/slog"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/governor"
	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// stormLimit is how many faults the backends and governors below make
// before they work: enough to tell a second's containment from a goroutine
// respawned at once, few enough that a test without containment ends.
const stormLimit = 5000

// A backend whose Take or Start faults every time (a panic, or
// runtime.Goexit ending the loop's or worker's goroutine) does not make the
// scheduler retry it in a hot loop of respawned goroutines: its queue is
// left alone for a second after each fault, so a minute sees about sixty.
func TestAnAlwaysFaultyBackendIsRetriedOnceASecond(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"Take", "Start"} {
		for name, fault := range map[string]func(){"panic": func() { panic("backend bug in " + in) }, "Goexit": runtime.Goexit} {
			t.Run(in+"/"+name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
					b := &faultyRuns{Backend: sched.NewMemory[int, int](), in: in, fault: fault, upTo: stormLimit}
					q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Backend: b, Handler: nop[int, int]})
					must.Add(t, q, 1)
					time.Sleep(time.Minute)
					synctest.Wait()
					if n := b.faults.Load(); n < 30 || n > 120 {
						t.Errorf("%s faulted %d times in a minute, want about once a second", in, n)
					}
				})
			})
		}
	}
}

// A governor whose NowFunc panics in, or ends the goroutine of, every
// scheduling loop that asks it for a permit (as the queue's usage is
// charged) takes nothing down and does not make the loops respawn in a hot
// loop either: the queue is left alone for a second after each fault.
func TestAGovernorThatFaultsInTheLoopsIsRetriedOnceASecond(t *testing.T) {
	t.Parallel()
	for name, fault := range map[string]func(){"panic": func() { panic("NowFunc bug") }, "Goexit": runtime.Goexit} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var faults atomic.Int64
				now := func() time.Time {
					var buf [4096]byte
					if strings.Contains(string(buf[:runtime.Stack(buf[:], false)]), "sched.(*Scheduler).loop") && faults.Add(1) <= stormLimit {
						fault()
					}
					return time.Now()
				}
				g, err := governor.New(governor.Config{Sampler: &fakeSampler{}, Interval: time.Second, Slots: 4, NowFunc: now})
				if err != nil {
					t.Fatal(err)
				}
				ctx := context.Background()
				if err := g.Start(ctx); err != nil {
					t.Fatal(err)
				}
				defer g.Stop(ctx)
				s := newScheduler(t, sched.Config{Workers: 1, Governor: g, Logger: quiet})
				var runs atomic.Int64
				q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Handler: sleeper(0, &runs)})
				must.Add(t, q, 1)
				time.Sleep(time.Minute)
				synctest.Wait()
				if n := faults.Load(); n < 30 || n > 120 {
					t.Errorf("the governor faulted in %d loops in a minute, want about one a second", n)
				}
				if runs.Load() != 0 {
					t.Errorf("%d runs while every admission failed", runs.Load())
				}
			})
		})
	}
}

// A handler that ends its goroutine (runtime.Goexit) is no dependency's
// fault: its queue is not left alone for a second, and the next jobs run
// at once.
func TestAHandlersGoexitDoesNotHoldItsQueueBack(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
		var runs atomic.Int64
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Handler: func(context.Context, *sched.Job[int, int]) error {
			runs.Add(1)
			runtime.Goexit()
			return nil
		}})
		for i := range 5 {
			must.Add(t, q, i)
		}
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		if n := runs.Load(); n != 5 {
			t.Errorf("%d of 5 runs within 100ms", n)
		}
	})
}

// One fault is logged once: a backend's Take that ends the loop's
// goroutine is contained where Take is called, and not again as the loop
// ends.
func TestATakeThatEndsTheLoopIsLoggedOnce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var errs atomic.Int64
		s := newScheduler(t, sched.Config{Workers: 1, Logger: slog.New(onRecord(func(r slog.Record) {
			if r.Level >= slog.LevelError {
				errs.Add(1)
			}
		}))})
		b := &faultyRuns{Backend: sched.NewMemory[int, int](), in: "Take", fault: runtime.Goexit}
		var runs atomic.Int64
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Backend: b, Handler: sleeper(0, &runs)})
		must.Add(t, q, 1)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if errs.Load() != 1 || runs.Load() != 1 {
			t.Errorf("%d error records and %d runs, want 1 and 1", errs.Load(), runs.Load())
		}
	})
}
