package recovery_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/recovery"
	"github.com/jobkit/jobkit/sched"
)

// Disabled entries that are delayed (not waiting to run) do not hide a
// stall: Config.StallThreshold counts entries waiting to run. They did
// once, when the reaper took Counts.Disabled, which counts disabled entries
// in every state, from the pending and awaiting ones.
func TestStallNotHiddenByDisabledDelayedEntries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newRig(t, 2, recovery.Config{TakenThreshold: -1, StallThreshold: 10})
		stuck := queue[int](g, "stuck", sched.QueueConfig[int, int]{Lease: time.Hour, MaxConcurrency: 1,
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				g.hang()
				return nil
			}})
		for i := range 20 {
			add(t, stuck, i) // 1 runs (hung), 19 pending
		}
		// 30 parked entries: disabled, due next year. They wait for
		// nothing.
		for i := 100; i < 130; i++ {
			if _, ok, err := stuck.Add(context.Background(), i, sched.At(time.Now().Add(365*24*time.Hour)), sched.Disabled()); err != nil || !ok {
				t.Fatalf("Add: %v %v", ok, err)
			}
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		c, _ := stuck.Counts(context.Background())
		g.mu.Lock()
		defer g.mu.Unlock()
		if len(g.alerts) == 0 {
			t.Errorf("no stall alert: counts %+v (19 pending, 1 running, none ends for 2s; threshold 10)", c.States())
		}
	})
}

// A Stalled alert means that none of the queue's runs ended during a whole
// Interval: two looks at the same instant (Look is what the reaper does
// once an Interval, at once) raise none for a queue whose runs end every
// 50ms. They did once, when the reaper compared the runs ended with the
// last look's, however recent.
func TestNoStallAlertFromTwoLooksAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newRig(t, 2, recovery.Config{Interval: time.Hour, Grace: time.Hour, TakenThreshold: -1, StallThreshold: 5})
		busy := queue[int](g, "busy", sched.QueueConfig[int, int]{MaxConcurrency: 1,
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				time.Sleep(50 * time.Millisecond)
				return nil
			}})
		for i := range 40 {
			add(t, busy, i)
		}
		time.Sleep(10 * time.Millisecond)
		synctest.Wait()
		ctx := context.Background()
		g.r.Look(ctx)
		g.r.Look(ctx) // no time has passed: not a whole Interval (1h)
		time.Sleep(time.Second)
		synctest.Wait()
		c, _ := busy.Counts(ctx)
		g.mu.Lock()
		defer g.mu.Unlock()
		for _, a := range g.alerts {
			t.Errorf("alert %v (Interval 1h, runs end every 50ms; counts now %+v)", a, c.States())
		}
	})
}
