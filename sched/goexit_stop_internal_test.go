package sched

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"testing"
	"time"
)

// TestGoexitAfterWorkClosedStops is the regression test of a Stop that
// never returned: a handler that ended its goroutine with runtime.Goexit
// after Stop had closed the workers' channel got a replacement worker that
// read the channel field after Stop had cleared it, and blocked for ever on
// a nil channel, so Stop waited for it for ever.
func TestGoexitAfterWorkClosedStops(t *testing.T) {
	s, err := New(Config{Workers: 2, Loops: 1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	release := make(chan struct{})
	q, err := NewQueue(s, "q", QueueConfig[int, int]{Handler: func(ctx context.Context, j *Job[int, int]) error {
		close(started)
		<-release
		runtime.Goexit()
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := q.Add(ctx, 1); err != nil {
		t.Fatal(err)
	}
	<-started
	// The handler is running; close the workers' channel as Stop does
	// before it waits for the workers, then let the handler Goexit.
	s.cancelLoops(ErrStopped)
	s.loops.Wait()
	s.closeWork()
	close(release)
	stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s.Stop(stopCtx); err != nil {
		t.Fatalf("Stop: %v (a worker started after the channel closed did not end)", err)
	}
}
