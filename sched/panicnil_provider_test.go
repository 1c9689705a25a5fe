package sched_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jobkit/jobkit/internal/testkit"
	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// Under GODEBUG=panicnil=1, a metrics provider that panics with nil as
// NewQueue asks it for the queue's metrics fails NewQueue with ErrInvalid,
// as one that panics with a value does (TestPanickingMetricsAreContained).
// Before, NewQueue took it for no panic and returned the queue, its
// metrics silently off.
func TestAMetricsProviderThatPanicsNilFailsNewQueue(t *testing.T) {
	if testkit.InChild(t, "GODEBUG=panicnil=1") {
		s := must.New(t, sched.Config{Workers: 1, Metrics: &panicky{newMode: "panic nil"}, Logger: quiet})
		_, err := sched.NewQueue(s, "q", sched.QueueConfig[int, int]{Handler: func(context.Context, *sched.Job[int, int]) error { return nil }})
		if !errors.Is(err, sched.ErrInvalid) {
			t.Errorf("NewQueue with a provider that panics with nil = %v; want ErrInvalid", err)
		}
	}
}
