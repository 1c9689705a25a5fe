package sched_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// A gauge metric that hangs as the metrics loop sets it, with a handler
// hung too: StopAndCancel abandons the run and returns when its context
// ends. (Real time: see TestAHangingDelayLetsStopAndCancelReturn.)
func TestAHangingGaugeLetsStopAndCancelReturn(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	p := &panicky{which: "unfinished", fault: func() {
		close(entered)
		<-release
	}}
	s := must.New(t, sched.Config{Workers: 1, Metrics: p, Logger: quiet})
	hung := make(chan struct{})
	q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
		Handler: func(context.Context, *sched.Job[int, int]) error {
			close(hung)
			<-release // ignores ctx
			return nil
		},
	})
	must.Add(t, q, 1)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-hung
	p.armed.Store(true)
	<-entered
	if err := stopAndCancelSoon(t, s); !errors.Is(err, sched.ErrAbandoned) {
		t.Errorf("StopAndCancel = %v, want ErrAbandoned", err)
	}
}
