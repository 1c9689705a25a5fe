package sched_test

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
	"github.com/jobkit/jobkit/scope"
)

// newScheduler returns a scheduler configured by cfg, started, and stopped
// when the test ends.
func newScheduler(t *testing.T, cfg sched.Config) *sched.Scheduler {
	t.Helper()
	s := must.New(t, cfg)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return s
}

func nop[T any, K comparable](context.Context, *sched.Job[T, K]) error { return nil }

// quiet discards the logs of schedulers whose faults a test provokes.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// onRecord is a slog handler that calls its function with every record,
// at every level: the tests' Loggers that fault, hang, count or stop.
type onRecord func(slog.Record)

func (onRecord) Enabled(context.Context, slog.Level) bool { return true }
func (f onRecord) Handle(_ context.Context, r slog.Record) error {
	f(r)
	return nil
}
func (f onRecord) WithAttrs([]slog.Attr) slog.Handler { return f }
func (f onRecord) WithGroup(string) slog.Handler      { return f }

// firstRecordHangs returns a Logger whose first record hangs until release
// is called (the rest pass), and a channel closed once it hangs. Defer
// release: it must come before the Cleanup that stops the scheduler.
func firstRecordHangs() (log *slog.Logger, entered <-chan struct{}, release func()) {
	in, out := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	return slog.New(onRecord(func(slog.Record) {
		if first.CompareAndSwap(false, true) {
			close(in)
			<-out
		}
	})), in, func() { close(out) }
}

// rescuing returns a scheduler of workers workers and one loop, not yet
// started, and its Inspector, with rescues on.
func rescuing(t *testing.T, workers int) (*sched.Scheduler, *sched.Inspector) {
	t.Helper()
	s := must.New(t, sched.Config{Workers: workers, Loops: 1, Logger: quiet})
	in := s.Inspector()
	in.EnableRescue()
	return s, in
}

// start starts s; at the end of the test, release (if not nil) lets the
// handlers return, and s stops.
func start(t *testing.T, s *sched.Scheduler, release func()) {
	t.Helper()
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if release != nil {
			release()
		}
		if err := s.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
}

// claimElsewhere has "another process" take the one pending entry of mem
// and start it with a lease of a second; the claim's scope closes when the
// test ends. It runs in a testing/synctest bubble.
func claimElsewhere(t *testing.T, mem *sched.Memory[int, int]) sched.Claim[int, int] {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	sc := scope.New()
	t.Cleanup(func() { _ = sc.Close(scope.Succeeded()) })
	cs, err := mem.Take(ctx, sc, sched.TakeRequest{Now: now, Max: 1, LeaseUntil: now.Add(time.Second)}, nil)
	if err != nil || len(cs) != 1 {
		t.Fatalf("Take = %d claims, %v; want 1", len(cs), err)
	}
	if err := mem.Start(ctx, &cs[0], now, now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	return cs[0]
}

// lapseElsewhere has "another process" claim the one pending entry of mem
// (claimElsewhere) and go away; once the lease lapsed, it returns what in's
// Reap reports. It runs in a testing/synctest bubble.
func lapseElsewhere(t *testing.T, mem *sched.Memory[int, int], in *sched.Inspector) []sched.Rescue {
	t.Helper()
	claimElsewhere(t, mem)
	time.Sleep(2 * time.Second) // the other process is gone: its lease lapses
	rs, err := in.Reap(context.Background(), time.Now(), 0)
	if err != nil {
		t.Fatalf("Reap: %v", err)
	}
	return rs
}
