package cron_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/cron"
	"github.com/jobkit/jobkit/sched"
)

// A retry that cannot start before the job's next time is dropped, the
// later time wins (WithRetry), also when the retry was due before that
// time and starts late: here the 01:00 run's retry is due at 01:03, the one
// worker is busy 01:02-01:07, and the job's next time is 01:05. Once, the
// engine ran the retry of 01:00 at 01:07 and counted 01:05 as missed.
func TestLateRetryLosesToTheNextTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sleepUntil(at(0, 0).Add(30 * time.Second))
		e := startEngine(t, cron.Config{Workers: 1})
		log := newRunLog()
		must(t, e.RegisterSpec(ctx, "job", "*/5 1 * * *", log.fn("job", func(_ context.Context, at time.Time, i int) error {
			if i == 0 {
				return errors.New("fail")
			}
			return nil
		}), cron.WithLocation(time.UTC), cron.WithRetry(sched.RetryPolicy{MaxRetries: 1, Base: 3 * time.Minute})))
		must(t, e.RegisterSpec(ctx, "blocker", "2 1 * * *", log.fn("blocker", func(context.Context, time.Time, int) error {
			time.Sleep(5 * time.Minute) // holds the only worker 01:02-01:07
			return nil
		}), cron.WithLocation(time.UTC)))
		sleepUntil(at(1, 8))
		synctest.Wait()
		equalStrings(t, "job (scheduled@start)", hhmm(log.get("job")), []string{"01:00@01:00:00", "01:05@01:07:00"})
	})
}
