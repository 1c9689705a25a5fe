package sched_test

import (
	"context"
	"testing"

	"github.com/jobkit/jobkit/internal/testkit"
	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// nilPanicErr is an error whose Error panics with nil.
type nilPanicErr struct{}

func (nilPanicErr) Error() string { panic(testkit.NilValue()) }

// Under GODEBUG=panicnil=1, a handler's error whose Error method panics
// with nil, which recover cannot tell from no panic, fails its run as one
// that panics with a value does (TestAnErrorWhoseErrorMethodFaultsFailsItsRun),
// and the next job runs. Before, the run was classified as the zero
// Outcome, which the backend refused to settle: the entry went back to
// pending when its batch ended and ran again, and again, for ever.
func TestAnErrorWhoseErrorMethodPanicsNilFailsItsRun(t *testing.T) {
	if testkit.InChild(t, "GODEBUG=panicnil=1") {
		s := must.New(t, sched.Config{Workers: 1, Logger: quiet})
		ran := make(chan int, 100)
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Retry: &sched.NoRetry,
			Handler: func(_ context.Context, j *sched.Job[int, int]) error {
				ran <- j.Payload
				if j.Payload == 1 {
					return nilPanicErr{}
				}
				return nil
			},
		})
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		e := runOneAndTwo(t, s, q, ran)
		if e.State != sched.StateFailed || len(e.Errors) != 1 || e.Attempts != 1 {
			t.Errorf("entry %v after %d attempts, %d reruns, with errors %+v; want failed once", e.State, e.Attempts, e.Reruns, e.Errors)
		}
	}
}
