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

// The latency metric observes how long an entry waited ready to run, from
// when it last became ready (Claim.ReadyAt). An entry in the error queue
// that an operator retries becomes ready at the Retry: run at once, it
// waited no time. (Backend.Retry had no time of its own: Memory took the
// last Take's or Promote's, on a quiet queue the failed run's dispatch, an
// hour back here.)
func TestARetriedEntryWasReadyAtTheRetry(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g := newGauges()
		s := newScheduler(t, sched.Config{Workers: 1, Metrics: g, Logger: quiet})
		runs := 0
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Handler: func(context.Context, *sched.Job[int, int]) error {
				runs++
				if runs == 1 {
					return sched.Permanent(errors.New("bad input"))
				}
				return nil
			},
		})
		id := must.Add(t, q, 1)
		synctest.Wait()
		if c := must.Counts(t, q); c.Failed != 1 {
			t.Fatalf("counts %+v, want the entry failed", c)
		}
		time.Sleep(time.Hour) // the error queue waits for an operator
		if err := s.Inspector().RetryID(context.Background(), "q", id, true); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // it runs at once: no time passes in the bubble
		if runs != 2 {
			t.Fatalf("%d runs, want 2", runs)
		}
		lat := g.observations("latency")
		if len(lat) != 2 || lat[1] != 0 {
			t.Errorf("latencies %v s: the retried run started the instant it was retried, want it observed as 0 s", lat)
		}
	})
}
