package sched_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// A run poisoned after too many reruns failed: the queue's summary counts
// it among the last minute's failures, and its failure rate shows it.
// (From mutation testing: the window leaving poisoned runs out survived
// every test.)
func TestAPoisonedRunCountsAsAFailureInTheSummary(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			MaxReruns: 1,
			Handler: func(context.Context, *sched.Job[int, int]) error {
				return sched.Rerun(errors.New("again"))
			},
		})
		must.Add(t, q, 1)
		synctest.Wait()
		if c := must.Counts(t, q); c.Poisoned != 1 {
			t.Fatalf("counts %+v, want the entry poisoned", c)
		}
		qs, err := s.Inspector().Summary(context.Background(), "q")
		if err != nil {
			t.Fatal(err)
		}
		if qs.Succeeded != 0 || qs.Failed != 1 || qs.FailureRate != 1 || qs.Ended != 2 {
			t.Errorf("summary: succeeded %d, failed %d, failure rate %v, ended %d; want 0, 1 (the poisoned run), 1 and 2 (the rerun and the poisoned run)",
				qs.Succeeded, qs.Failed, qs.FailureRate, qs.Ended)
		}
	})
}
