package sched_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// A StopAndCancel whose context is done already abandons the runs whose
// handlers ignore the cancellation, every time: it returns ErrAbandoned
// and their entries are pending again. Before, it did so only when it won
// two coin tosses between its done context and the lifecycle lock, then
// the end of the scheduling loops; else it returned the context's error,
// having abandoned nothing (about one call in three).
func TestStopAndCancelWithADoneContextAbandons(t *testing.T) {
	t.Parallel()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range 50 { // each call tossed the coins again
		synctest.Test(t, func(t *testing.T) {
			s, q, id, release := startHung(t)
			if err := s.StopAndCancel(done); !errors.Is(err, sched.ErrAbandoned) {
				t.Errorf("call %d: StopAndCancel with a done context = %v, want ErrAbandoned", i, err)
			}
			if e, err := q.Get(context.Background(), id); err != nil || e.State != sched.StatePending {
				t.Errorf("call %d: the hung run's entry: %v, %v; want it pending again", i, e.State, err)
			}
			close(release)
			if err := s.Stop(context.Background()); err != nil {
				t.Errorf("call %d: a Stop after it = %v, want nil", i, err)
			}
		})
	}
}

// startHung starts a scheduler of one worker whose queue q runs the entry
// it adds, id, in a handler that ignores its context until release is
// closed; it returns once the run has started.
func startHung(t *testing.T) (*sched.Scheduler, *sched.Queue[int, int], sched.ID, chan struct{}) {
	t.Helper()
	s := must.New(t, sched.Config{Workers: 1, Logger: quiet})
	running, release := make(chan struct{}), make(chan struct{})
	q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Handler: func(context.Context, *sched.Job[int, int]) error {
		close(running)
		<-release // ignores ctx
		return nil
	}})
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	id := must.Add(t, q, 1)
	<-running
	return s, q, id, release
}
