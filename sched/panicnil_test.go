package sched_test

import (
	"context"
	"testing"

	"github.com/jobkit/jobkit/internal/testkit"
	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// Under GODEBUG=panicnil=1 (a setting Go keeps for old code), a handler's
// panic(nil) leaves recover nil: it is a failed run all the same, with a
// panic. Before, it succeeded. The test runs in a child process with that
// setting.
func TestAHandlersPanicNilUnderGODEBUGFails(t *testing.T) {
	if testkit.InChild(t, "GODEBUG=panicnil=1") {
		s := must.New(t, sched.Config{Workers: 1, Logger: quiet})
		ran := make(chan int, 2)
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Retry: &sched.NoRetry,
			Handler: func(_ context.Context, j *sched.Job[int, int]) error {
				ran <- j.Payload
				if j.Payload == 1 {
					panic(testkit.NilValue())
				}
				return nil
			},
		})
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		e := runOneAndTwo(t, s, q, ran)
		if e.State != sched.StateFailed || len(e.Errors) != 1 || !e.Errors[0].Panic {
			t.Errorf("entry %v with errors %+v, want failed with a panic", e.State, e.Errors)
		}
	}
}
