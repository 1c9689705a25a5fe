package cron_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/cron"
	"github.com/jobkit/jobkit/sched"
)

// WithRetry: "A retry that would start at or after the job's next time ...
// is dropped: the later time wins." Here the retry of the 01:00 run is due
// at 01:03, but the one worker is busy until 01:05:00 exactly, the job's
// next time: the retry is dropped and 01:05 runs, once, at 01:05.
func TestRetryStartingExactlyAtTheNextTimeIsDropped(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sleepUntil(at(0, 0).Add(30 * time.Second))
		e := startEngine(t, cron.Config{Workers: 1})
		log := newRunLog()
		must(t, e.RegisterSpec(ctx, "job", "*/5 1 * * *", log.fn("job", func(_ context.Context, _ time.Time, i int) error {
			if i == 0 {
				return errors.New("fail")
			}
			return nil
		}), cron.WithLocation(time.UTC), cron.WithRetry(sched.RetryPolicy{MaxRetries: 1, Base: 3 * time.Minute})))
		must(t, e.RegisterSpec(ctx, "blocker", "2 1 * * *", log.fn("blocker", func(context.Context, time.Time, int) error {
			time.Sleep(3 * time.Minute) // holds the only worker 01:02-01:05:00
			return nil
		}), cron.WithLocation(time.UTC)))
		sleepUntil(at(1, 8))
		synctest.Wait()
		equalStrings(t, "job (scheduled@start)", hhmm(log.get("job")), []string{"01:00@01:00:00", "01:05@01:05:00"})
	})
}

// WithRetry retries a failed run "after p's delays (counted from the end of
// the failed run)", and a handler that calls runtime.Goexit has failed (its
// outcome is scope.ErrGoexit, see JobInfo.LastErr): its retry starts no
// sooner than the delay after it, although the scheduler hands the job's
// entry back at once after such a run.
func TestRetryOfAGoexitRunWaitsForItsDelay(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sleepUntil(at(0, 0).Add(30 * time.Second))
		e := startEngine(t, cron.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		log := newRunLog()
		must(t, e.RegisterSpec(ctx, "job", "0 * * * *", log.fn("job", func(_ context.Context, _ time.Time, i int) error {
			if i == 0 {
				runtime.Goexit()
			}
			return nil
		}), cron.WithLocation(time.UTC), cron.WithRetry(sched.RetryPolicy{MaxRetries: 1, Base: 10 * time.Minute})))
		sleepUntil(at(1, 30))
		synctest.Wait()
		equalStrings(t, "job (scheduled@start)", hhmm(log.get("job")), []string{"01:00@01:00:00", "01:00@01:10:00"})
	})
}

// JobInfo.RetryAt is "when a failed run is retried", and WithRetry drops a
// retry that would start at or after the job's next time. A run of 01:00
// that fails at once, with a retry delay of 5 minutes on a job every 5
// minutes, gets no retry: Job reports none, and 01:05 runs once, at 01:05.
func TestRetryDueExactlyAtTheNextTimeIsNotReported(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sleepUntil(at(0, 0).Add(30 * time.Second))
		e := startEngine(t, cron.Config{})
		log := newRunLog()
		must(t, e.RegisterSpec(ctx, "job", "*/5 1 * * *", log.fn("job", func(_ context.Context, _ time.Time, i int) error {
			if i == 0 {
				return errors.New("fail")
			}
			return nil
		}), cron.WithLocation(time.UTC), cron.WithRetry(sched.RetryPolicy{MaxRetries: 1, Base: 5 * time.Minute})))
		sleepUntil(at(1, 1))
		synctest.Wait()
		if info, _ := e.Job("job"); !info.RetryAt.IsZero() || !info.Next.Equal(at(1, 5)) {
			t.Errorf("after the failed 01:00 run: RetryAt %v, Next %v; want no retry (it would start at the next time), Next 01:05", info.RetryAt, info.Next)
		}
		sleepUntil(at(1, 7))
		synctest.Wait()
		equalStrings(t, "job (scheduled@start)", hhmm(log.get("job")), []string{"01:00@01:00:00", "01:05@01:05:00"})
	})
}

// A paused job has no retry waiting: Pause drops one (WithRetry), and a
// retry planned while the job is paused could never run, since the job
// does not run until Resume, which drops it too. So a run that fails after
// its job was paused plans none, and Job reports none (JobInfo.RetryAt is
// "when a failed run is retried").
func TestRunFailingWhilePausedPlansNoRetry(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sleepUntil(at(0, 0).Add(30 * time.Second))
		e := startEngine(t, cron.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		release := make(chan struct{})
		must(t, e.RegisterSpec(ctx, "job", "0 * * * *", func(context.Context, time.Time) error {
			<-release
			return errors.New("fail")
		}, cron.WithLocation(time.UTC), cron.WithRetry(sched.RetryPolicy{MaxRetries: 2, Base: 10 * time.Minute})))
		sleepUntil(at(1, 0).Add(time.Second))
		synctest.Wait() // the 01:00 run is in progress
		must(t, e.Pause(ctx, "job"))
		close(release)
		synctest.Wait()
		info, _ := e.Job("job")
		if info.Running || info.Failures != 1 {
			t.Fatalf("Job = %+v; want the run ended, failed", info)
		}
		if !info.RetryAt.IsZero() {
			t.Errorf("paused job after a failed run: RetryAt = %v, want none", info.RetryAt)
		}
	})
}
