package props

import (
	"context"
	"errors"
	"fmt"

	"github.com/jobkit/jobkit/distinct"
	"github.com/jobkit/jobkit/scope"
)

// The property the state machine checks after every step, on one fixed
// sequence: a failed scope puts its items back in their original positions,
// so the queue and the reference model agree.
func Example() {
	q, _ := distinct.New[int](distinct.Config{})
	m := &model{held: map[int]*heldEntry{}, counts: map[int]*itemCounts{}}
	for x := range 5 {
		q.Add(x)
		m.add(x)
	}
	_ = scope.Run(context.Background(), func(ctx context.Context, s *scope.Scope) error {
		got, _ := q.Take(ctx, s, 2)
		want := m.take(2, 0)
		fmt.Println("took", got, "model took", want)
		for _, x := range want {
			m.settle(x, false)
		}
		return errors.New("handler failed")
	})
	fmt.Println("queue", q.Queued(), "model", m.items())
	// Output:
	// took [0 1] model took [0 1]
	// queue [0 1 2 3 4] model [0 1 2 3 4]
}
