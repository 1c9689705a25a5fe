package recovery_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/recovery"
	"github.com/jobkit/jobkit/sched"
)

// holdingHandler is a slog handler that holds the first record of a rescue
// until release is closed, telling held when it does.
func holdingHandler(held, release chan struct{}) slog.Handler {
	var once sync.Once
	return recordFunc(func(rec slog.Record) {
		if strings.Contains(rec.Message, "rescued") {
			once.Do(func() { close(held); <-release })
		}
	})
}

// Looks may overlap. A stall alerts once, when it begins: a look that
// read the time before another look, but finished after it (held in its
// Logger while it logged a rescue), does not end the stall that the other
// look saw begin, so that the next look alerts for it again though no run
// of the queue ended.
func TestStallAlertsOnceWithOverlappingLooks(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, err := sched.New(sched.Config{Workers: 2, Loops: 1, Logger: quiet})
		must(t, err)
		held, release := make(chan struct{}), make(chan struct{})
		var stalls atomic.Int64
		r, err := recovery.New(s, recovery.Config{
			Interval: time.Minute, Grace: time.Second, TakenThreshold: -1, StallThreshold: 1,
			Logger: slog.New(holdingHandler(held, release)),
			OnAlert: func(a recovery.Alert) {
				if a.Kind == recovery.Stalled {
					stalls.Add(1)
				}
			},
		})
		must(t, err)
		gate := make(chan struct{})
		stuck, err := sched.NewQueue(s, "stuck", sched.QueueConfig[int, int]{
			Lease: time.Hour, MaxConcurrency: 1,
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error { <-gate; return nil },
		})
		must(t, err)
		var hungOnce atomic.Bool
		hung, err := sched.NewQueue(s, "hung", sched.QueueConfig[int, int]{
			Lease: time.Second,
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				if !hungOnce.Swap(true) {
					<-gate // the first run hangs, ignoring ctx: rescued
				}
				return nil
			},
		})
		must(t, err)
		must(t, s.Start(ctx))
		defer func() {
			close(gate)
			must(t, s.Stop(ctx))
		}()
		add(t, stuck, 1) // runs and hangs
		add(t, stuck, 2) // waits: the queue stalls
		add(t, hung, 1)
		synctest.Wait()

		r.Look(ctx) // t=0: the stall's count starts
		time.Sleep(59 * time.Second)
		bDone := make(chan struct{})
		go func() { defer close(bDone); r.Look(ctx) }() // B: reads t=59s, rescues, held in its Logger
		<-held
		time.Sleep(time.Second)
		r.Look(ctx) // A, t=60s: stalled for an Interval: the alert
		close(release)
		<-bDone // B ends with its t=59s
		time.Sleep(time.Second)
		r.Look(ctx) // t=61s: still the same stall, no run of stuck ended
		if n := stalls.Load(); n != 1 {
			t.Errorf("%d Stalled alerts for one stall, want 1", n)
		}
	})
}

// A stall alerts once, when it begins, and ends when a run ends, the queue
// is paused or fewer entries wait: the clock set back during a stall does
// not end it, so that it alerts again an Interval later though no run of
// the queue ended.
func TestStallAlertsOnceWhenTheClockGoesBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sys, err := sched.New(sched.Config{Logger: quiet}) // never started: for its clock
		must(t, err)
		clock := &steppedClock{sys: sys.Clock()}
		s, err := sched.New(sched.Config{Workers: 1, Loops: 1, Logger: quiet, Clock: clock})
		must(t, err)
		var stalls atomic.Int64
		r, err := recovery.New(s, recovery.Config{Interval: time.Minute, StallThreshold: 1, TakenThreshold: -1, Logger: quiet,
			OnAlert: func(a recovery.Alert) {
				if a.Kind == recovery.Stalled {
					stalls.Add(1)
				}
			}})
		must(t, err)
		gate := make(chan struct{})
		defer func() {
			close(gate)
			must(t, s.Stop(ctx))
		}()
		stallable(t, s, gate) // one entry runs and hangs, one waits
		synctest.Wait()

		r.Look(ctx)
		clock.step(time.Minute)
		r.Look(ctx)            // stalled: the alert
		clock.step(-time.Hour) // the clock is set back
		r.Look(ctx)
		clock.step(time.Minute)
		r.Look(ctx) // the same stall: no run of the queue ended
		if n := stalls.Load(); n != 1 {
			t.Errorf("%d Stalled alerts for one stall, want 1", n)
		}
	})
}
