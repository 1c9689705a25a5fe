package distinct_test

import (
	"context"
	"testing"

	"github.com/jobkit/jobkit/distinct"
	"github.com/jobkit/jobkit/internal/testkit"
)

// A function given to Process or Work that returns an error wrapping
// itself fails its batch, which goes back to the queue at its place, and
// the call returns that error. Before, the batch's exit was classified
// with errors.As (scope.ExitOf), which walked the cycle for ever: the call
// never returned, and the batch stayed in progress, its keys refused.
func TestAnErrorThatWrapsItselfPutsTheBatchBack(t *testing.T) {
	t.Parallel()
	bad := &testkit.Cycle{}
	for name, call := range map[string]func(q *distinct.Queue[string]) error{
		"Process": func(q *distinct.Queue[string]) error {
			return q.Process(context.Background(), 2, func(context.Context, []string) error { return bad })
		},
		"Work": func(q *distinct.Queue[string]) error {
			return q.Work(context.Background(), 2, func(context.Context, []string) error { return bad })
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			q := newQueue[string](t, distinct.Config{})
			q.AddAll([]string{"a", "b", "c"})
			var err error
			testkit.Within(t, name, func() { err = call(q) })
			if err != bad {
				t.Errorf("%s returned %v, want the handler's error", name, err)
			}
			wantQueued(t, q, "a", "b", "c")
			if q.Add("a") {
				t.Error("a was added again: it should be queued")
			}
			closeAndDrain(t, q)
		})
	}
}
