package sched_test

import (
	"context"
	"testing"

	"github.com/jobkit/jobkit/sched"
)

// newScheduler returns a scheduler configured by cfg, started, and stopped
// when the test ends.
func newScheduler(t *testing.T, cfg sched.Config) *sched.Scheduler {
	t.Helper()
	s, err := sched.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return s
}

func nop[T any, K comparable](context.Context, *sched.Job[T, K]) error { return nil }
