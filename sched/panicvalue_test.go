package sched_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/internal/testkit"
	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// A handler that panics with a value that cannot be formatted fails its run
// like any panic: the entry's error names the value's type, and the worker
// goes on to the next job.
func TestHandlerPanicOfAnUnprintableValueFailsTheRun(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Retry: &sched.NoRetry,
			Handler: func(_ context.Context, j *sched.Job[int, int]) error {
				if j.Payload == 1 {
					panic(testkit.Stubborn{})
				}
				return nil
			},
		})
		id := must.Add(t, q, 1)
		must.Add(t, q, 2)
		time.Sleep(time.Second)
		synctest.Wait()
		if c := must.Counts(t, q); c.Failed != 1 || c.Succeeded != 1 {
			t.Fatalf("counts %+v, want the panic failed and the next job succeeded", c)
		}
		e, err := q.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if len(e.Errors) != 1 || !e.Errors[0].Panic || !strings.Contains(e.Errors[0].Message, "Stubborn") {
			t.Errorf("errors %+v, want one panic naming the value's type", e.Errors)
		}
	})
}
