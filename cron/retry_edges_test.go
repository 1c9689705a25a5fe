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

// Stop called from a job's retry policy's Delay (user code the engine
// calls while the failed run ends, on a goroutine of its own) returns
// without waiting for the drain, which would wait for that very run. It
// waited until its context ended, once: the engine looked only for its
// handler on the stack.
func TestStopFromRetryDelayDoesNotWaitForItsRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bg := context.Background()
		sleepUntil(at(0, 0).Add(30 * time.Second))
		e, err := cron.New(cron.Config{})
		must(t, err)
		must(t, e.Start(bg))
		stopCtx, cancel := context.WithCancel(bg)
		stopped := make(chan error, 1)
		policy := sched.RetryPolicy{MaxRetries: 1, Delay: func(int, error) time.Duration {
			stopped <- e.Stop(stopCtx)
			return time.Minute
		}}
		must(t, e.RegisterSpec(bg, "job", "0 * * * *", func(context.Context, time.Time) error {
			return errors.New("fail")
		}, cron.WithLocation(time.UTC), cron.WithRetry(policy)))
		sleepUntil(at(1, 0).Add(10 * time.Second))
		synctest.Wait()
		select {
		case err := <-stopped:
			if err != nil {
				t.Errorf("Stop from the retry Delay = %v", err)
			}
		default:
			t.Errorf("Stop called from the retry Delay is still blocked 10s (fake) after the run: it waits for the run that calls it")
		}
		cancel()
		synctest.Wait()
		must(t, e.Stop(bg))
	})
}

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
