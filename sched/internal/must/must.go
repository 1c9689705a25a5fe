// Package must holds the test helpers that sched's tests and its
// subpackages' tests share: each does one call and fails the test if the
// call fails.
package must

import (
	"context"
	"testing"

	"github.com/jobkit/jobkit/sched"
)

// New returns a scheduler configured by cfg, not started, failing the test
// on error.
func New(t testing.TB, cfg sched.Config) *sched.Scheduler {
	t.Helper()
	s, err := sched.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Queue registers a queue, failing the test on error.
func Queue[T any, K comparable](t testing.TB, s *sched.Scheduler, name string, cfg sched.QueueConfig[T, K]) *sched.Queue[T, K] {
	t.Helper()
	q, err := sched.NewQueue(s, name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// Add adds v to q, failing the test unless it was added.
func Add[T any, K comparable](t testing.TB, q *sched.Queue[T, K], v T, opts ...sched.AddOption) sched.ID {
	t.Helper()
	id, ok, err := q.Add(context.Background(), v, opts...)
	if err != nil || !ok {
		t.Fatalf("Add(%v) = %v, %v", v, ok, err)
	}
	return id
}

// Counts returns q's counts, failing the test on error.
func Counts[T any, K comparable](t testing.TB, q *sched.Queue[T, K]) sched.Counts {
	t.Helper()
	c, err := q.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c
}
