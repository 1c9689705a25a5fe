package cron_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/cron"
	"github.com/jobkit/jobkit/recovery"
	"github.com/jobkit/jobkit/sched"
)

// On a shared scheduler with a recovery reaper, a healthy cron job that
// made up more than TakenThreshold missed runs raises no TakenTooOften
// alert: the engine moves its entry on to a catch-up by a snooze until a
// time that has come (store.Settle), not a rerun. (Reruns, which never go
// down, count in the reaper's "taken", Attempts + Reruns + 1: every run of
// the job raised an alert, for ever.) Here a job every minute makes up 12
// runs missed during a restart (RunEach(12)), then runs once a minute.
func TestCatchUpsRaiseNoTakenTooOften(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
		s, err := sched.New(sched.Config{Workers: 2, Logger: quiet})
		must(t, err)
		var mu sync.Mutex
		var alerts []recovery.Alert
		r, err := recovery.New(s, recovery.Config{Interval: time.Second, Logger: quiet, OnAlert: func(a recovery.Alert) {
			mu.Lock()
			alerts = append(alerts, a)
			mu.Unlock()
		}})
		must(t, err)
		must(t, s.Start(ctx))
		must(t, r.Start(ctx))
		e, err := cron.New(cron.Config{Scheduler: s, Logger: quiet})
		must(t, err)
		must(t, e.Start(ctx))

		each12, err := cron.RunEach(12)
		must(t, err)
		sleepUntil(time.Now().Truncate(time.Minute).Add(time.Minute + 30*time.Second))
		// The last run of the previous process was 20 minutes ago.
		last := time.Now().Truncate(time.Minute).Add(-20 * time.Minute)
		work := func(context.Context, time.Time) error {
			time.Sleep(3 * time.Second) // long enough for a look to see it
			return nil
		}
		must(t, e.RegisterSpec(ctx, "job", "* * * * *", work, cron.WithLocation(time.UTC),
			cron.WithMissed(each12), cron.WithLastRun(last)))
		time.Sleep(2 * time.Minute) // the 12 catch-ups (36s) are done
		synctest.Wait()
		mu.Lock()
		before := len(alerts)
		mu.Unlock()
		time.Sleep(10 * time.Minute) // ten ordinary runs, one a minute
		synctest.Wait()
		info, _ := e.Job("job")
		mu.Lock()
		late := alerts[before:]
		mu.Unlock()
		if len(late) > 0 {
			t.Errorf("%d TakenTooOften alerts during 10 minutes of ordinary, successful runs after the catch-up (job %d runs, %d failures); first %v",
				len(late), info.Runs, info.Failures, late[0])
		}
		must(t, e.Stop(ctx))
		must(t, r.Stop(ctx))
		must(t, s.Stop(ctx))
	})
}
