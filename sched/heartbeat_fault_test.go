package sched_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// panickingRenewBackend is sched's in-memory backend whose Renew and
// Progress panic.
type panickingRenewBackend struct{ sched.Backend[int, int] }

func (panickingRenewBackend) Renew(context.Context, sched.ID, uint64, time.Time) error {
	panic("backend bug in Renew")
}

func (panickingRenewBackend) Progress(context.Context, sched.ID, uint64, sched.Progress) error {
	panic("backend bug in Progress")
}

// A backend's Renew or Progress that panics under a handler's Heartbeat or
// Progress is an error of that call, as the package doc says of a backend's
// Renew on the scheduler's goroutines: the handler goes on, and its run
// ends with its own result. Before, the panic went up through the handler,
// and its run failed with the backend's panic for the handler's own.
func TestABackendPanicInAJobsCallIsAnErrorOfTheCall(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
		type errs struct{ beat, progress error }
		got := make(chan errs, 1)
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Backend: panickingRenewBackend{sched.NewMemory[int, int]()},
			Retry:   &sched.NoRetry,
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				var e errs
				defer func() { got <- e }()
				e.beat = j.Heartbeat(ctx)
				e.progress = j.Progress(ctx, sched.Progress{Done: 1})
				return nil
			},
		})
		id := must.Add(t, q, 1)
		e := <-got
		if e.beat == nil || e.progress == nil {
			t.Errorf("Heartbeat = %v, Progress = %v; want both errors", e.beat, e.progress)
		}
		synctest.Wait()
		if x, err := q.Get(context.Background(), id); err != nil || x.State != sched.StateSucceeded {
			t.Errorf("the run's entry: %v, %v (%+v); want it succeeded, the handler's result", x.State, err, x.Errors)
		}
	})
}
