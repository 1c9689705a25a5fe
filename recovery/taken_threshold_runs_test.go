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

// Config.TakenThreshold: "A look sees only the runs in progress at its
// moment: an entry whose runs all fall between looks (a quick handler
// retried after a backoff) raises none." An entry whose runs fail at once
// and are retried 20 times, a little over a second apart, is taken 21
// times and raises no alert. (The doc said once that an entry taken more
// than TakenThreshold times raises an alert, whenever it ran.)
func TestTakenThresholdSeesOnlyRunsInProgress(t *testing.T) {
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
		if got := g.alertsOf(recovery.TakenTooOften); len(got) != 0 {
			t.Errorf("TakenTooOften alerts %v for an entry no look saw running", got)
		}
	})
}
