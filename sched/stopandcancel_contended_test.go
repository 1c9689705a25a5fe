package sched_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
)

// A StopAndCancel whose context ends while another Stop, with no deadline,
// waits for a handler that ignores the cancellation abandons that run, as
// it does alone: it returns ErrAbandoned, the entry is pending again, and
// the other Stop, which waited for the handler, returns too. Before, it
// waited for the lifecycle lock that the other Stop held, returned its
// context's error without abandoning anything, and both the run and the
// other Stop went on for as long as the handler hung.
func TestStopAndCancelAbandonsWhileAnotherStopWaits(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s, q, id, release := startHung(t)
		defer synctest.Wait() // the abandoned handler's goroutine ends
		defer close(release)
		stopped := make(chan error, 1)
		go func() { stopped <- s.Stop(context.Background()) }()
		synctest.Wait() // the Stop holds the lifecycle lock and waits for the handler
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := s.StopAndCancel(ctx); !errors.Is(err, sched.ErrAbandoned) {
			t.Errorf("StopAndCancel while a Stop waits = %v, want ErrAbandoned", err)
		}
		if e, err := q.Get(context.Background(), id); err != nil || e.State != sched.StatePending {
			t.Errorf("the hung run's entry: %v, %v; want it pending again", e.State, err)
		}
		synctest.Wait()
		select {
		case err := <-stopped:
			if err != nil {
				t.Errorf("the waiting Stop = %v, want nil", err)
			}
		default:
			t.Error("the waiting Stop has not returned once the run was abandoned")
		}
	})
}
