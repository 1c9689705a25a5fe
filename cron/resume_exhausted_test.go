package cron

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
)

// startedEngine returns a started Engine of one worker, stopped when the
// test ends: startEngine for the tests inside the package.
func startedEngine(t *testing.T) *Engine {
	t.Helper()
	e, err := New(Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Stop(context.Background()); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return e
}

// onceAt fires once, at at.
type onceAt struct{ at time.Time }

func (s onceAt) Next(t time.Time) time.Time {
	if t.Before(s.at) {
		return s.at
	}
	return time.Time{}
}

// A job whose schedule runs out while it is paused has no further time
// when it is resumed: its entry must end (as it does when a run finds no
// further time), not stay behind disabled, pending for ever and never
// dispatched, so that no live entry remains for a job that is not paused
// and has nothing to run.
func TestResumeWithNoFurtherTimeEndsTheEntry(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := startedEngine(t)
		ran := 0
		fn := func(context.Context, time.Time) error { ran++; return nil }
		if err := e.Register(ctx, "j", onceAt{time.Now().Add(time.Minute)}, fn); err != nil {
			t.Fatal(err)
		}
		if err := e.Pause(ctx, "j"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Minute) // the only time passes while paused
		synctest.Wait()
		if err := e.Resume(ctx, "j"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if ran != 0 {
			t.Errorf("ran %d times; want 0 (its only time fell while paused)", ran)
		}
		info, _ := e.Job("j")
		if info.Paused || !info.Next.IsZero() {
			t.Fatalf("Job = %+v; want resumed, with no next time", info)
		}
		for ent, err := range e.store.List(ctx, sched.Filter[string, string]{
			States: []sched.State{sched.StateDelayed, sched.StatePending, sched.StateAwaiting, sched.StateRunning},
		}) {
			if err != nil {
				t.Fatal(err)
			}
			t.Errorf("live entry left for a resumed job with no further time: %+v", ent)
		}
	})
}

// twice fires at a and at b.
type twice struct{ a, b time.Time }

func (s twice) Next(t time.Time) time.Time {
	switch {
	case t.Before(s.a):
		return s.a
	case t.Before(s.b):
		return s.b
	}
	return time.Time{}
}

// A run that pauses its job (whose entry is then disabled), outlasts the
// job's last time, resumes it (no further time) and fails plans a retry:
// the retry runs. Resume must enable the entry even though the job has no
// further time, or the retry's snooze leaves it disabled and the retry
// never comes.
func TestResumeDuringARunWithNoFurtherTimeKeepsItsRetry(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := startedEngine(t)
		runs := 0
		fn := func(ctx context.Context, _ time.Time) error {
			if runs++; runs == 1 {
				if err := e.Pause(ctx, "j"); err != nil {
					t.Error(err)
				}
				time.Sleep(2 * time.Minute) // past the job's last time
				if err := e.Resume(ctx, "j"); err != nil {
					t.Error(err)
				}
			}
			return errors.New("fail")
		}
		now := time.Now()
		if err := e.Register(ctx, "j", twice{now.Add(time.Minute), now.Add(2 * time.Minute)}, fn,
			WithRetry(sched.RetryPolicy{MaxRetries: 1, Base: time.Minute})); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		if runs != 2 {
			info, _ := e.Job("j")
			t.Errorf("%d runs, want 2 (the run and its retry); job %+v", runs, info)
		}
	})
}
