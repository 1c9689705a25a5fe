package distinct_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/jobkit/jobkit/distinct"
	"github.com/jobkit/jobkit/scope"
)

// A consumer takes items inside a scope: success removes them, failure puts
// them back where they were.
func Example() {
	q, err := distinct.New[string](distinct.Config{})
	if err != nil {
		panic(err)
	}
	fmt.Println(q.AddAll([]string{"resize img-1", "resize img-2", "resize img-1"}))

	ctx := context.Background()
	err = scope.Run(ctx, func(ctx context.Context, s *scope.Scope) error {
		items, err := q.Take(ctx, s, 10)
		if err != nil {
			return err
		}
		fmt.Println("took", items, "- queued", q.Queued())
		return errors.New("thumbnail service down")
	})
	fmt.Println("failed:", err, "- queued", q.Queued())

	_ = q.Process(ctx, 1, func(ctx context.Context, items []string) error {
		fmt.Println("done", items)
		return nil
	})
	fmt.Println("queued", q.Queued())
	// Output:
	// [resize img-1]
	// took [resize img-1 resize img-2] - queued []
	// failed: thumbnail service down - queued [resize img-1 resize img-2]
	// done [resize img-1]
	// queued [resize img-2]
}

// Workers drain a closed queue, then stop.
func ExampleQueue_Close() {
	var q distinct.Queue[int]
	q.AddAll([]int{1, 2, 3})
	q.Close()
	for {
		err := q.Process(context.Background(), 2, func(_ context.Context, items []int) error {
			fmt.Println(items)
			return nil
		})
		if errors.Is(err, distinct.ErrClosed) {
			fmt.Println("closed and drained")
			return
		}
	}
	// Output:
	// [1 2]
	// [3]
	// closed and drained
}

// Work is the consumer loop: it processes batches until the queue is closed
// and drained (or f fails, or ctx is done while it waits).
func ExampleQueue_Work() {
	var q distinct.Queue[string]
	q.AddAll([]string{"a", "b", "c", "a"})
	q.Close()
	err := q.Work(context.Background(), 2, func(_ context.Context, items []string) error {
		fmt.Println(items)
		return nil
	})
	fmt.Println(err)
	// Output:
	// [a b]
	// [c]
	// distinct: queue closed
}
