package recovery_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/recovery"
	"github.com/jobkit/jobkit/sched"
)

// Config.TakenThreshold: "an entry taken more than this many times (its
// runs: retries and reruns count) raises an alert". An entry whose runs
// fail at once and are retried 20 times, a little over a second apart, is
// taken 21 times; its runs fall between the reaper's looks.
func TestTakenThresholdCountsRunsBetweenLooks(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g := newRig(t, 2, recovery.Config{Interval: interval, Grace: grace, StallThreshold: -1})
		q := queue[int](g, "q", sched.QueueConfig[int, int]{
			Retry: &sched.RetryPolicy{MaxRetries: 20, Delay: func(int, error) time.Duration { return time.Second + 37*time.Millisecond }},
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				return errors.New("again") // at once: no look sees the run
			}})
		id := add(t, q, 1)
		time.Sleep(30 * time.Second)
		synctest.Wait()
		if e := get(t, q, id); e.State != sched.StateFailed || e.Attempts != 21 {
			t.Fatalf("entry %v after %d attempts; want failed after 21", e.State, e.Attempts)
		}
		if got := g.alertsOf(recovery.TakenTooOften); len(got) == 0 {
			t.Errorf("no TakenTooOften alert for an entry taken 21 times (threshold 10)")
		}
	})
}
