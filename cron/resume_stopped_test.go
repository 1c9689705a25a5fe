package cron_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/cron"
	"github.com/jobkit/jobkit/scope"
)

// panicOnce panics at its n-th call of Next only.
type panicOnce struct {
	s     cron.Schedule
	n     int
	calls int
}

func (p *panicOnce) Next(t time.Time) time.Time {
	if p.calls++; p.calls == p.n {
		panic("schedule hiccup")
	}
	return p.s.Next(t)
}

// The package doc: a Schedule whose Next panics "stops its job until
// [Engine.Update]: the panic ... is joined to the job's last outcome ... and
// Next is not called again". Pause and Resume are not Update: the job stays
// stopped, and LastErr, which says it is stopped, stays true.
func TestResumeDoesNotRestartAJobStoppedByItsSchedule(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sleepUntil(at(0, 0).Add(30 * time.Second))
		e := startEngine(t, cron.Config{})
		log := newRunLog()
		ps := &panicOnce{s: mustParse(t, "* * * * *", cron.WithLocation(time.UTC)), n: 3}
		must(t, e.Register(ctx, "flaky", ps, log.fn("flaky", nil)))
		sleepUntil(at(0, 5).Add(30 * time.Second))
		info, _ := e.Job("flaky")
		var p *scope.PanicError
		if !errors.As(info.LastErr, &p) || !info.Next.IsZero() {
			t.Fatalf("before Pause: %+v; want stopped by its schedule", info)
		}
		calls := ps.calls
		must(t, e.Pause(ctx, "flaky"))
		must(t, e.Resume(ctx, "flaky"))
		sleepUntil(at(0, 10).Add(30 * time.Second))
		info, _ = e.Job("flaky")
		if ps.calls != calls {
			t.Errorf("Next called %d more times after the job stopped", ps.calls-calls)
		}
		if n := len(log.get("flaky")); n != 2 {
			t.Errorf("%d runs, want 2 (the job stays stopped until Update)", n)
		}
		if !info.Next.IsZero() {
			t.Errorf("after Resume: %+v; want no next time until Update", info)
		}
		// Update restarts it.
		must(t, e.Update(ctx, "flaky", mustParse(t, "* * * * *", cron.WithLocation(time.UTC))))
		sleepUntil(at(0, 12).Add(30 * time.Second))
		info, _ = e.Job("flaky")
		if info.LastErr != nil || info.Next.IsZero() {
			t.Errorf("after Update: %+v; want running again", info)
		}
	})
}
