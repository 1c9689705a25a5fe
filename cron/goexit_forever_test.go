package cron_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/cron"
	"github.com/jobkit/jobkit/scope"
)

// A handler that calls runtime.Goexit at every run never stops later runs,
// however many runs it ends so: each is recorded as the last outcome, and
// the job runs at each of its times.
func TestEngine_GoexitAtEveryRunNeverStopsTheJob(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sleepUntil(at(0, 0).Add(30 * time.Second))
		e := startEngine(t, cron.Config{})
		must(t, e.RegisterSpec(ctx, "job", "* * * * *", func(context.Context, time.Time) error {
			runtime.Goexit()
			return nil
		}, cron.WithLocation(time.UTC)))
		const n = 60
		sleepUntil(at(0, n).Add(30 * time.Second))
		info, _ := e.Job("job")
		if info.Runs != n || info.Failures != n || !errors.Is(info.LastErr, scope.ErrGoexit) {
			t.Errorf("after %d minutes: Runs %d, Failures %d, LastErr %v; want %d runs, each a Goexit", n, info.Runs, info.Failures, info.LastErr, n)
		}
	})
}
