package cron_test

import (
	"context"
	"testing"
	"time"

	"github.com/jobkit/jobkit/cron"
	"github.com/jobkit/jobkit/sched"
)

// shiftedClock is a clock moved by a fixed offset; its timers are the
// clock's own.
type shiftedClock struct {
	sched.Clock
	by time.Duration
}

func (c shiftedClock) Now() time.Time { return c.Clock.Now().Add(c.by) }

// The engine tells the time by its scheduler's clock, the one that
// promotes its entries: an @every job registered on a scheduler whose
// clock is 1,000 hours ahead is next due an interval after that clock's
// now, not the system's.
func TestEngineUsesTheSchedulersClock(t *testing.T) {
	t.Parallel()
	const ahead = 1000 * time.Hour
	base, err := sched.New(sched.Config{}) // for its default clock
	if err != nil {
		t.Fatal(err)
	}
	clock := shiftedClock{Clock: base.Clock(), by: ahead}
	s, err := sched.New(sched.Config{Workers: 1, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	e, err := cron.New(cron.Config{Scheduler: s})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	before := clock.Now()
	if err := e.RegisterSpec(ctx, "job", "@every 1h", func(context.Context, time.Time) error { return nil }); err != nil {
		t.Fatal(err)
	}
	after := clock.Now()
	j, ok := e.Job("job")
	if !ok {
		t.Fatal("job not registered")
	}
	if j.Next.Before(before.Add(time.Hour)) || j.Next.After(after.Add(time.Hour)) {
		t.Errorf("next run at %v, want an hour after the scheduler's now (%v…%v)", j.Next, before, after)
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}
