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

// newQueue registers a queue, failing the test on error.
func newQueue[T any, K comparable](t *testing.T, s *sched.Scheduler, name string, cfg sched.QueueConfig[T, K]) *sched.Queue[T, K] {
	t.Helper()
	q, err := sched.NewQueue(s, name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// add adds v to q, failing the test unless it was added.
func add[T any, K comparable](t *testing.T, q *sched.Queue[T, K], v T, opts ...sched.AddOption) sched.ID {
	t.Helper()
	id, ok, err := q.Add(context.Background(), v, opts...)
	if err != nil || !ok {
		t.Fatalf("Add(%v) = %v, %v", v, ok, err)
	}
	return id
}

// counts returns q's counts, failing the test on error.
func counts[T any, K comparable](t *testing.T, q *sched.Queue[T, K]) sched.Counts {
	t.Helper()
	c, err := q.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func nop[T any, K comparable](context.Context, *sched.Job[T, K]) error { return nil }
