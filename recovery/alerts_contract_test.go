package recovery_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/recovery"
	"github.com/jobkit/jobkit/sched"
)

// alertsOf returns the alerts of kind k that g's reaper raised.
func (g *rig) alertsOf(k recovery.AlertKind) []recovery.Alert {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []recovery.Alert
	for _, a := range g.alerts {
		if a.Kind == k {
			out = append(out, a)
		}
	}
	return out
}

// stuckQueue adds to g a queue whose runs hang, one at a time, and n entries
// to it: one runs (hung), n-1 wait.
func stuckQueue(g *rig, name string, n int) *sched.Queue[int, int] {
	q := queue[int](g, name, sched.QueueConfig[int, int]{Lease: time.Hour, MaxConcurrency: 1,
		Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
			g.hang()
			return nil
		}})
	for i := range n {
		add(g.t, q, i)
	}
	return q
}

// Config.Grace "defaults to Interval": a run that neither beats nor
// returns is rescued no sooner than lease + Interval after its start.
func TestGraceDefaultsToInterval(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g := newRig(t, 2, recovery.Config{Interval: interval}) // Grace left to its default
		var mu sync.Mutex
		var start, cancelled time.Time
		q := queue[int](g, "q", sched.QueueConfig[int, int]{MaxRescues: 100, Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
			mu.Lock()
			if start.IsZero() {
				start = time.Now()
				context.AfterFunc(ctx, func() {
					mu.Lock()
					cancelled = time.Now()
					mu.Unlock()
				})
			}
			mu.Unlock()
			g.hang()
			return nil
		}})
		time.Sleep(30 * time.Millisecond) // the run starts between two looks
		add(t, q, 1)
		time.Sleep(5 * time.Second)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if cancelled.IsZero() {
			t.Fatal("the hung run was never rescued")
		}
		if d := cancelled.Sub(start); d < lease+interval || d > lease+2*interval {
			t.Errorf("rescued %v after the start; want within [lease + Interval, lease + 2 Intervals] = [%v, %v]", d, lease+interval, lease+2*interval)
		}
	})
}

// Config.TakenThreshold: "an entry taken more than this many times (its
// runs: retries and reruns count) raises an alert. Defaults to 10". An
// entry failing and retried, whose runs each last longer than an Interval,
// raises one alert at its 11th run, with Taken 11, and none before.
func TestTakenThresholdDefaultsToTen(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g := newRig(t, 2, recovery.Config{Interval: interval, Grace: grace, StallThreshold: -1})
		q := queue[int](g, "q", sched.QueueConfig[int, int]{
			Retry: &sched.RetryPolicy{MaxRetries: 10, Base: time.Millisecond},
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				time.Sleep(150 * time.Millisecond) // every run is seen by a look
				return errors.New("again")
			}})
		id := add(t, q, 1)
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if e := get(t, q, id); e.State != sched.StateFailed || e.Attempts != 11 {
			t.Fatalf("entry %v after %d attempts; want failed after 11", e.State, e.Attempts)
		}
		got := g.alertsOf(recovery.TakenTooOften)
		if len(got) != 1 || got[0].Taken != 11 || got[0].ID != id {
			t.Errorf("TakenTooOften alerts %v; want one, for entry %d taken 11 times", got, id)
		}
	})
}

// An entry taken more than TakenThreshold times raises its alert once for
// each count it reaches, not at every look while that run goes on; a stall
// raises its alert once, when it begins (see Config.StallThreshold and
// Reaper.Look).
func TestAlertsAreRaisedOnce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g := newRig(t, 4, recovery.Config{Interval: interval, Grace: grace, TakenThreshold: 1, StallThreshold: 10})
		q := queue[int](g, "retried", sched.QueueConfig[int, int]{Lease: time.Hour,
			Retry: &sched.RetryPolicy{MaxRetries: 1, Base: time.Millisecond},
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				if j.Attempt == 1 {
					return errors.New("again")
				}
				g.hang() // the second run goes on for many looks
				return nil
			}})
		add(t, q, 1)
		stuckQueue(g, "stuck", 20)
		time.Sleep(3 * time.Second) // 30 looks
		synctest.Wait()
		if got := g.alertsOf(recovery.TakenTooOften); len(got) != 1 || got[0].Taken != 2 {
			t.Errorf("TakenTooOften alerts %v; want one, taken 2 times", got)
		}
		if got := g.alertsOf(recovery.Stalled); len(got) != 1 {
			t.Errorf("Stalled alerts %v; want one", got)
		}
	})
}

// Config.StallThreshold: a queue with "at least this many entries waiting
// to run ... raises an alert. Defaults to 100": 100 waiting entries stall a
// queue, 99 do not.
func TestStallThresholdDefaultsToAHundred(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g := newRig(t, 4, recovery.Config{Interval: interval, Grace: grace})
		stuckQueue(g, "ninety-nine", 1+99)
		stuckQueue(g, "hundred", 1+100)
		time.Sleep(time.Second)
		synctest.Wait()
		got := g.alertsOf(recovery.Stalled)
		if len(got) != 1 || got[0].Queue != "hundred" || got[0].Waiting != 100 {
			t.Errorf("Stalled alerts %v; want one, for the queue with 100 waiting", got)
		}
	})
}

// Config.StallThreshold counts a stall only "though some are running": a
// queue whose entries wait because the workers are all busy with another
// queue's runs raises no Stalled alert, and neither does a queue paused
// while its run hangs ("A stall ends when ... the queue is paused"), nor
// one whose waiting entries are mostly disabled (they wait for nothing).
func TestNoStallWithoutRunsOrWhilePausedOrDisabled(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g := newRig(t, 2, recovery.Config{Interval: interval, Grace: grace, TakenThreshold: -1, StallThreshold: 10})
		hog := queue[int](g, "hog", sched.QueueConfig[int, int]{Lease: time.Hour, BatchSize: 1, Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
			g.hang()
			return nil
		}})
		for i := range 2 {
			add(t, hog, i) // both workers, for good
		}
		time.Sleep(10 * time.Millisecond)
		synctest.Wait()
		starved := queue[int](g, "starved", sched.QueueConfig[int, int]{Handler: func(context.Context, *sched.Job[int, int]) error { return nil }})
		for i := range 20 {
			add(t, starved, i)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if got := g.alertsOf(recovery.Stalled); len(got) != 0 {
			t.Errorf("Stalled alerts %v for a queue with nothing running", got)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		g := newRig(t, 2, recovery.Config{Interval: interval, Grace: grace, TakenThreshold: -1, StallThreshold: 10})
		paused := stuckQueue(g, "paused", 20)
		time.Sleep(10 * time.Millisecond)
		synctest.Wait() // one runs, hung
		paused.Pause()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if got := g.alertsOf(recovery.Stalled); len(got) != 0 {
			t.Errorf("Stalled alerts %v for a paused queue", got)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		g := newRig(t, 2, recovery.Config{Interval: interval, Grace: grace, TakenThreshold: -1, StallThreshold: 10})
		q := stuckQueue(g, "disabled", 1+5) // 5 enabled entries wait
		for i := 100; i < 110; i++ {
			if _, ok, err := q.Add(context.Background(), i, sched.Disabled()); err != nil || !ok {
				t.Fatalf("Add: %v %v", ok, err)
			}
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if got := g.alertsOf(recovery.Stalled); len(got) != 0 {
			t.Errorf("Stalled alerts %v with 5 enabled and 10 disabled entries waiting (threshold 10)", got)
		}
	})
}
