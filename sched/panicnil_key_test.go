package sched_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jobkit/jobkit/internal/testkit"
	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// Under GODEBUG=panicnil=1, a Key or Group function that panics with nil
// is an error of Add wrapping ErrInvalid, as a panic with a value is, and
// adds nothing. Before, Add took it for no panic: it added the payload
// with the zero key (or no group).
func TestAKeyOrGroupFunctionThatPanicsNilIsAnErrorOfAdd(t *testing.T) {
	if testkit.InChild(t, "GODEBUG=panicnil=1") {
		s := must.New(t, sched.Config{Workers: 1, Logger: quiet})
		panicNil := func(v int) bool {
			if v == 1 {
				panic(testkit.NilValue())
			}
			return false
		}
		keyed := must.Queue(t, s, "key", sched.QueueConfig[int, int]{
			Handler: nop[int, int],
			Key: func(v int) int {
				panicNil(v)
				return v
			},
		})
		grouped := must.Queue(t, s, "group", sched.QueueConfig[int, int]{
			Handler: nop[int, int],
			Group: func(v int) string {
				panicNil(v)
				return "g"
			},
		})
		for _, q := range []*sched.Queue[int, int]{keyed, grouped} {
			if _, added, err := q.Add(context.Background(), 1); added || !errors.Is(err, sched.ErrInvalid) {
				t.Errorf("queue %s: Add whose function panics with nil = %v, %v; want ErrInvalid", q.Name(), added, err)
			}
			if _, err := q.AddAll(context.Background(), []int{2, 1, 3}); !errors.Is(err, sched.ErrInvalid) {
				t.Errorf("queue %s: AddAll whose function panics with nil on the second = %v; want ErrInvalid", q.Name(), err)
			}
			if c := must.Counts(t, q); c.Added != 1 {
				t.Errorf("queue %s: %d added, want 1 (the 2 before the payload that panics)", q.Name(), c.Added)
			}
		}
	}
}
