package distinct_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/jobkit/jobkit/distinct"
)

// AddWait is TryAdd that waits for room while the queue is full. An item that
// is already queued needs no room: TryAdd reports (false, nil) for it at once,
// even on a full queue, and so must AddWait, whether or not other adders wait
// for room. Before, an AddWait that found another adder waiting lined up
// behind it without looking at its own item, and a duplicate waited for room
// it did not need, for as long as the queue stayed full.
func TestAddWaitOfAQueuedItemDoesNotWaitForRoom(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue[int](t, distinct.Config{Capacity: 1})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		q.Add(1) // full
		waiting := make(chan error, 1)
		go func() { _, err := q.AddWait(ctx, 2); waiting <- err }()
		synctest.Wait() // 2 waits for room

		if added, err := q.TryAdd(1); added || err != nil {
			t.Fatalf("TryAdd(1) = %v, %v; want false, nil", added, err)
		}
		dup := make(chan error, 1)
		go func() {
			added, err := q.AddWait(ctx, 1)
			if added {
				t.Error("AddWait of a queued item reported added")
			}
			dup <- err
		}()
		synctest.Wait()
		select {
		case err := <-dup:
			if err != nil {
				t.Errorf("AddWait(1) = %v, want nil", err)
			}
		default:
			t.Error("AddWait of an item already queued waits for room it does not need")
			cancel()
			<-dup
		}
		cancel()
		<-waiting
	})
}
