package cron_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/cron"
)

// A run that starts late is not missed while the following time has not
// passed (package documentation, "Late and missed runs"), and a time that
// falls exactly on the moment of a dispatch has not passed. Here the one
// worker is busy until 01:05:00 exactly: 01:00 runs late, at 01:05, and
// 01:05 is not lost, even under Skip.
func TestLateRunEndingOnTheNextTimeKeepsIt(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sleepUntil(at(0, 0).Add(30 * time.Second))
		e := startEngine(t, cron.Config{Workers: 1})
		log := newRunLog()
		must(t, e.RegisterSpec(ctx, "job", "*/5 1 * * *", log.fn("job", nil), cron.WithLocation(time.UTC)))
		must(t, e.RegisterSpec(ctx, "blocker", "58 0 * * *", log.fn("blocker", func(context.Context, time.Time, int) error {
			time.Sleep(7 * time.Minute) // holds the only worker 00:58-01:05:00
			return nil
		}), cron.WithLocation(time.UTC)))
		sleepUntil(at(1, 12))
		synctest.Wait()
		equalStrings(t, "job (scheduled@start)", hhmm(log.get("job")), []string{"01:00@01:05:00", "01:05@01:05:00", "01:10@01:10:00"})
	})
}

// A missed run that a job's policy made up when it was registered
// (WithLastRun: "the runs missed since are made up by the job's policy when
// it is registered"; Job reports it in CatchUp) still runs when the engine
// starts late, and a time that passed before Start but whose following time
// has not is late, not missed (package documentation, "Late and missed
// runs"): both run. Here "* 1 * * *" under RunOnce, last run 00:57,
// registered at 01:00:30 (01:00 made up), started at 01:01:30: 01:00 and
// 01:01 run at once, then 01:02 on time. (A waiting catch-up does not
// make a late time missed: RunOnce would then keep 01:01 alone, and the
// 01:00 that Job reported as made up would never run.)
func TestMadeUpRunSurvivesALateStart(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sleepUntil(at(1, 0).Add(30 * time.Second))
		e, err := cron.New(cron.Config{})
		must(t, err)
		log := newRunLog()
		must(t, e.RegisterSpec(ctx, "job", "* 1 * * *", log.fn("job", nil), cron.WithLocation(time.UTC),
			cron.WithMissed(cron.RunOnce), cron.WithLastRun(at(0, 57))))
		if info, _ := e.Job("job"); info.CatchUp != 1 || !info.Next.Equal(at(1, 1)) {
			t.Fatalf("registered: %+v; want 01:00 made up (CatchUp 1), Next 01:01", info)
		}
		sleepUntil(at(1, 1).Add(30 * time.Second))
		must(t, e.Start(ctx))
		sleepUntil(at(1, 2).Add(30 * time.Second))
		synctest.Wait()
		equalStrings(t, "job (scheduled@start)", hhmm(log.get("job")), []string{"01:00@01:01:30", "01:01@01:01:30", "01:02@01:02:00"})
		must(t, e.Stop(ctx))
	})
}
