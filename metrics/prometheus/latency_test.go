package prometheus_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	jkprom "github.com/jobkit/jobkit/metrics/prometheus"
	"github.com/jobkit/jobkit/sched"
)

// queue_duration_seconds counts only the time an entry waited ready to
// run, as client-go's does: an idle worker takes a delayed entry and a
// retry the moment they are due, and nothing is observed of the hour of
// delay or of backoff. Before, the wait counted from the entry's first add,
// so that a backlog alert written for client-go fired on an idle queue.
// adds_total counts the entries added, not the retry (see the doc).
func TestQueueDurationLeavesDelaysAndBackoffsOut(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		reg, p := setup(t, jkprom.Options{})
		s, err := sched.New(sched.Config{Workers: 2, Loops: 1, Metrics: p, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		var done sync.WaitGroup
		q, err := sched.NewQueue(s, "mail", sched.QueueConfig[string, string]{
			Handler: func(ctx context.Context, j *sched.Job[string, string]) error {
				if j.Payload == "flaky" && j.Attempt == 1 {
					return errors.New("smtp busy")
				}
				done.Done()
				return nil
			},
			Retry: &sched.RetryPolicy{MaxRetries: 1, Base: time.Hour},
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		done.Add(2)
		if _, ok, err := q.Add(ctx, "later", sched.After(time.Hour)); !ok || err != nil {
			t.Fatal(ok, err)
		}
		if _, ok, err := q.Add(ctx, "flaky"); !ok || err != nil {
			t.Fatal(ok, err)
		}
		done.Wait()
		synctest.Wait()
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		n, sum := histogram(t, reg, "jobkit_sched_queue_duration_seconds", "mail")
		// three dispatches (later, flaky, flaky's retry), each taken by an
		// idle worker the moment it was due: client-go would observe ~0s.
		if sum > 60 {
			t.Errorf("queue_duration_seconds: %d observations summing %.0fs on an idle queue, want about 0s (delay and backoff are not queueing)", n, sum)
		}
		if n != 3 {
			t.Errorf("queue_duration_seconds: %d observations, want 3 (later, flaky and its retry)", n)
		}
		if v := value(t, reg, "jobkit_sched_adds_total", "mail"); v != 2 {
			t.Errorf("adds_total %v, want 2", v)
		}
	})
}
