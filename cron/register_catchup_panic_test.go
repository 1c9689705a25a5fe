package cron_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/cron"
)

// Register "returns an error wrapping ErrInvalidJob for ... an s whose Next
// panics" (nothing is registered then). With WithLastRun, Register calls
// Next more than once: once for the first activation after the last run,
// then in the walk over the runs missed since. A Next that panics in the
// walk is a Next that panics during Register too.
func TestRegisterRefusesAScheduleThatPanicsInTheCatchUp(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sleepUntil(at(1, 0).Add(30 * time.Second))
		e := startEngine(t, cron.Config{})
		ps := &panicOnce{s: mustParse(t, "*/10 * * * *", cron.WithLocation(time.UTC)), n: 2}
		err := e.Register(ctx, "job", ps, func(context.Context, time.Time) error { return nil },
			cron.WithLastRun(at(0, 0)), cron.WithMissed(cron.RunOnce))
		if !errors.Is(err, cron.ErrInvalidJob) {
			info, ok := e.Job("job")
			t.Errorf("Register with a Next that panics in the catch-up = %v; want ErrInvalidJob (registered: %v, %+v)", err, ok, info)
		}
		if _, ok := e.Job("job"); ok && err != nil {
			t.Errorf("Register returned %v and registered the job", err)
		}
	})
}
