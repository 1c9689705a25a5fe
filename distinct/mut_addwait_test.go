package distinct_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/jobkit/jobkit/distinct"
)

// An AddWait that waited for room leaves nothing behind, whether it got the
// room or its context was done: later AddWaits that find room add at once,
// even with a done context (they need not wait, so the context does not
// matter), as if the earlier adder had never come.
func TestAddWaitThatWaitedLeavesNoWaiterBehind(t *testing.T) {
	done, stop := context.WithCancel(context.Background())
	stop()
	// addsAtOnce checks that AddWaits with a done context add at once.
	// With a waiter counted that is gone, each lines up for a turn and races
	// the done context: about half of them would fail.
	addsAtOnce := func(t *testing.T, q *distinct.Queue[int]) {
		t.Helper()
		for i := range 20 {
			x := 100 + i
			if added, err := q.AddWait(done, x); !added || err != nil {
				t.Fatalf("AddWait(done ctx, %d) with room = %v, %v; want true, nil", x, added, err)
			}
			q.Remove(x)
		}
	}
	t.Run("got room", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := newQueue[int](t, distinct.Config{Capacity: 1})
			q.Add(0) // full
			res := make(chan error, 1)
			go func() { _, err := q.AddWait(context.Background(), 1); res <- err }()
			synctest.Wait() // 1 waits for room
			q.Remove(0)
			if err := <-res; err != nil {
				t.Fatalf("AddWait = %v once there was room", err)
			}
			q.Remove(1)
			addsAtOnce(t, q)
		})
	})
	t.Run("cancelled", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := newQueue[int](t, distinct.Config{Capacity: 1})
			q.Add(0) // full
			ctx, cancel := context.WithCancel(context.Background())
			res := make(chan error, 1)
			go func() { _, err := q.AddWait(ctx, 1); res <- err }()
			synctest.Wait() // 1 waits for room
			cancel()
			if err := <-res; !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled AddWait = %v, want context.Canceled", err)
			}
			q.Remove(0) // room
			addsAtOnce(t, q)
		})
	})
}

// On a closed queue AddWait returns ErrClosed at once, whatever its context
// and whether or not another adder is still waiting: a closed queue needs no
// turn. The adder that waited when the queue closed still holds the turn for
// a moment; a done context must not win against ErrClosed meanwhile.
func TestAddWaitOnAClosedQueueIsErrClosedDespiteWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		done, stop := context.WithCancel(context.Background())
		stop()
		for round := range 20 {
			q := newQueue[int](t, distinct.Config{Capacity: 1})
			q.Add(0) // full
			res := make(chan error, 1)
			go func() { _, err := q.AddWait(context.Background(), 1); res <- err }()
			synctest.Wait() // 1 waits for room, holding the adders' turn

			q.Close()
			// At once, before the waiting adder has run again.
			if added, err := q.AddWait(done, 2); added || !errors.Is(err, distinct.ErrClosed) {
				t.Fatalf("round %d: AddWait on a closed queue = %v, %v; want false, ErrClosed", round, added, err)
			}
			if err := <-res; !errors.Is(err, distinct.ErrClosed) {
				t.Fatalf("round %d: waiting AddWait = %v, want ErrClosed", round, err)
			}
		}
	})
}
