package sched_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// summary returns the Inspector's summary of queue name.
func summary(t *testing.T, s *sched.Scheduler, name string) sched.QueueSummary {
	t.Helper()
	qs, err := s.Inspector().Summary(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return qs
}

// The summary's Succeeded counts the runs that ended over the last minute:
// a run that ended a minute ago, to the nanosecond, is out of it, and a
// run that ends then, in the slot the old one used, is counted alone.
// (From mutation testing: window.sums counting 61 buckets, id ≥ cur−60,
// and window.add reusing a slot of a minute before without clearing its
// counts, survived every test.)
func TestSummaryWindowIsExactlyTheLastMinute(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Handler: nop[int, int]})
		must.Add(t, q, 1)
		synctest.Wait() // the run ended now, at the bubble's start: no time passed
		if qs := summary(t, s, "q"); qs.Succeeded != 1 || qs.Failed != 0 {
			t.Fatalf("right after the run: Succeeded %d, Failed %d; want 1, 0", qs.Succeeded, qs.Failed)
		}
		time.Sleep(time.Minute - time.Nanosecond)
		if qs := summary(t, s, "q"); qs.Succeeded != 1 {
			t.Errorf("a minute less 1 ns after the run: Succeeded %d, want 1", qs.Succeeded)
		}
		time.Sleep(time.Nanosecond)
		if qs := summary(t, s, "q"); qs.Succeeded != 0 {
			t.Errorf("a minute after the run: Succeeded %d, want 0: the window spans more than a minute", qs.Succeeded)
		}
		must.Add(t, q, 2)
		synctest.Wait() // it ran a minute after the first, in the same slot of the window
		if qs := summary(t, s, "q"); qs.Succeeded != 1 {
			t.Errorf("after a second run a minute after the first: Succeeded %d, want 1: the slot kept the old count", qs.Succeeded)
		}
		if c := must.Counts(t, q); c.Succeeded+c.Expired != 2 {
			t.Errorf("counts %+v, want 2 runs ended", c)
		}
	})
}

// The summary's Failed counts a failed run that will be retried, as the
// QueueSummary documents: the run failed, whatever becomes of its entry.
// (From mutation testing: batch.settle counting OutcomeFailed and
// OutcomePoisoned in the window but not OutcomeRetry survived every test.)
func TestSummaryCountsAFailureThatWillBeRetried(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Retry:   &sched.RetryPolicy{MaxRetries: 1, Base: time.Hour},
			Handler: func(context.Context, *sched.Job[int, int]) error { return errors.New("fails") },
		})
		must.Add(t, q, 1)
		synctest.Wait()
		if c := must.Counts(t, q); c.Delayed != 1 {
			t.Fatalf("counts %+v, want the entry delayed for its retry", c)
		}
		if qs := summary(t, s, "q"); qs.Succeeded != 0 || qs.Failed != 1 || qs.FailureRate != 1 {
			t.Errorf("Succeeded %d, Failed %d, FailureRate %v; want 0, 1, 1: the failure to be retried is not counted", qs.Succeeded, qs.Failed, qs.FailureRate)
		}
	})
}
