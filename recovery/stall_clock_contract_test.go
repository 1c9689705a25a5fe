package recovery_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/recovery"
	"github.com/jobkit/jobkit/sched"
)

// Config.StallThreshold: a queue stalls "for as long as the looks since one
// that saw the same number of ended runs span an Interval". When the
// scheduler's clock is set back (a correction), the looks after it, which
// all see the same number of ended runs, span an Interval an Interval after
// the correction: the stall is reported then, not postponed by how far the
// clock went back.
func TestStallAfterTheClockGoesBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sys, err := sched.New(sched.Config{Logger: quiet}) // never started: for its clock
		if err != nil {
			t.Fatal(err)
		}
		clock := &steppedClock{sys: sys.Clock()}
		s, err := sched.New(sched.Config{Workers: 1, Loops: 1, Logger: quiet, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var alerts []recovery.Alert
		r, err := recovery.New(s, recovery.Config{Interval: time.Minute, StallThreshold: 1, TakenThreshold: -1, Logger: quiet,
			OnAlert: func(a recovery.Alert) { mu.Lock(); alerts = append(alerts, a); mu.Unlock() }})
		if err != nil {
			t.Fatal(err)
		}
		gate := make(chan struct{})
		defer func() {
			close(gate)
			if err := s.Stop(ctx); err != nil {
				t.Error(err)
			}
		}()
		stallable(t, s, gate) // one entry runs and hangs, one waits
		synctest.Wait()

		r.Look(ctx)
		clock.step(-24 * time.Hour) // the clock is set back a day
		r.Look(ctx)
		clock.step(time.Minute) // a whole Interval, by the clock, without a run ending
		r.Look(ctx)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		var stalls int
		for _, a := range alerts {
			if a.Kind == recovery.Stalled {
				stalls++
			}
		}
		if stalls != 1 {
			t.Errorf("%d Stalled alerts (%v), want 1: the looks since the clock went back span an Interval without a run ending", stalls, alerts)
		}
	})
}
