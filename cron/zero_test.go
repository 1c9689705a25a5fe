package cron_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jobkit/jobkit/cron"
)

// An Engine not made by New (the zero value, or a literal) returns an error
// wrapping ErrInvalidConfig from every call that would run or change jobs,
// instead of dereferencing its nil queue, scheduler or clock (Stop did so
// with the engine's lock held).
func TestZeroEngine(t *testing.T) {
	t.Parallel()
	var e cron.Engine
	ctx := context.Background()
	s, err := cron.Every(time.Minute, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	fn := func(context.Context, time.Time) error { return nil }
	calls := map[string]func() error{
		"Start":        func() error { return e.Start(ctx) },
		"Register":     func() error { return e.Register(ctx, "a", s, fn) },
		"RegisterSpec": func() error { return e.RegisterSpec(ctx, "a", "* * * * *", fn) },
		"Update":       func() error { return e.Update(ctx, "a", s) },
		"UpdateSpec":   func() error { return e.UpdateSpec(ctx, "a", "* * * * *") },
		"Pause":        func() error { return e.Pause(ctx, "a") },
		"Resume":       func() error { return e.Resume(ctx, "a") },
		"Unregister":   func() error { return e.Unregister(ctx, "a") },
		"Stop":         func() error { return e.Stop(ctx) },
		"Stop again":   func() error { return e.Stop(ctx) },
	}
	// The calls run on a goroutine of their own, bounded in real time: a
	// call that panicked with the engine's lock held blocks the next one
	// on a mutex, which synctest does not see as blocked.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for name, call := range calls {
			var err error
			panicked := func() (v any) {
				defer func() { v = recover() }()
				err = call()
				return nil
			}()
			if panicked != nil || !errors.Is(err, cron.ErrInvalidConfig) {
				t.Errorf("%s of a zero Engine: error %v, panic %v; want an error wrapping ErrInvalidConfig", name, err, panicked)
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a call on a zero Engine has not returned after 10s")
	}
	if jobs := e.Jobs(); len(jobs) != 0 {
		t.Errorf("Jobs = %v, want none", jobs)
	}
	if _, ok := e.Job("a"); ok {
		t.Error("Job found a job")
	}
}
