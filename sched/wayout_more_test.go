package sched_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// A handler that ends its goroutine (runtime.Goexit) is classified on the
// worker's way out before the batch's lock is taken: a retry policy's Delay
// that hangs there holds the worker and no lock, and StopAndCancel returns
// when its context ends, abandoning the run. Real time: a StopAndCancel
// blocked on the batch's lock is not durably blocked, so a synctest bubble
// would not move its clock. (From mutation testing: kills classifying under the lock in
// run's way out.)
func TestAHangingDelayOnTheWayOutLetsStopAndCancelReturn(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	s := must.New(t, sched.Config{Workers: 1, Logger: quiet})
	q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
		Retry: &sched.RetryPolicy{MaxRetries: 1, Delay: func(int, error) time.Duration {
			close(entered)
			<-release
			return time.Hour
		}},
		Handler: func(context.Context, *sched.Job[int, int]) error {
			runtime.Goexit()
			return nil
		},
	})
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	must.Add(t, q, 1)
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the run of a handler that called runtime.Goexit was not classified as a retry")
	}
	if err := stopAndCancelSoon(t, s); !errors.Is(err, sched.ErrAbandoned) {
		t.Errorf("StopAndCancel = %v, want ErrAbandoned", err)
	}
	if c := must.Counts(t, q); c.Pending != 1 {
		t.Errorf("counts %+v, want the abandoned run back in pending", c)
	}
}
