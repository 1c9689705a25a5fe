package cron

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/jobkit/jobkit/sched"
)

// The engine's queue is paused until Start and from Stop. On a shared
// scheduler its Inspector (and schedhttp) can resume it; the engine's
// entries must still wait: the first one dispatched pauses the queue again
// and settles where it was, and nothing runs. Before, a job ran before
// Start ("jobs ... wait for it"), and after Stop a job whose time had
// passed came back at once, for ever: begin snoozed it until that time,
// which had passed (thousands of dispatches a second, on a worker).
func TestTheInspectorsResumeOfTheQueueRunsNothingBeforeStartOrAfterStop(t *testing.T) {
	for _, stopped := range []bool{false, true} {
		name := "before Start"
		if stopped {
			name = "after Stop"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
			s, err := sched.New(sched.Config{Workers: 2, Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Start(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Stop(ctx) })
			e, err := New(Config{Scheduler: s, Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			ran := make(chan time.Time, 16)
			fn := func(_ context.Context, at time.Time) error { ran <- at; return nil }
			due := e.now().Add(time.Millisecond)
			if err := e.Register(ctx, "job", onceAt{due}, fn); err != nil {
				t.Fatal(err)
			}
			if stopped {
				if err := e.Start(ctx); err != nil {
					t.Fatal(err)
				}
				if err := e.Stop(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Inspector().Resume("cron"); err != nil {
				t.Fatal(err)
			}
			// Wait until the entry has come due and settled; it must
			// have been dispatched once, and run nothing.
			deadline := time.Now().Add(10 * time.Second)
			for {
				var ent sched.Entry[string, string]
				for x, err := range e.store.List(ctx, sched.Filter[string, string]{}) {
					if err != nil {
						t.Fatal(err)
					}
					ent = x
				}
				select {
				case at := <-ran:
					t.Fatalf("the job ran for %v", at)
				default:
				}
				if ent.Snoozes > 1 {
					t.Fatalf("the entry came back %d times: %+v", ent.Snoozes, ent)
				}
				if ent.Snoozes == 1 && ent.State == sched.StatePending && e.q.Paused() {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the entry did not settle: %+v, queue paused %v", ent, e.q.Paused())
				}
				runtime.Gosched()
			}
			if stopped {
				return
			}
			// Start runs it, late.
			if err := e.Start(ctx); err != nil {
				t.Fatal(err)
			}
			if at := <-ran; !at.Equal(due) {
				t.Errorf("ran for %v, want %v", at, due)
			}
			if err := e.Stop(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
