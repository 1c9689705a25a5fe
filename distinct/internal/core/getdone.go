package core

import (
	"context"

	"github.com/jobkit/jobkit/scope"
)

// The hooks of distinct/workqueue: client-go's Get and Done, one item at a
// time and settled by key, without a scope, and its two shutdowns.

// getOwner marks the batches of Get: no scope of a caller can be it, so
// Complete and Fail never settle them, and Done settles only them.
var getOwner = new(scope.Scope)

// Get waits until an item is queued, takes it as in progress and returns it
// with true; or returns false once the queue is closed and nothing is
// queued. It cannot be cancelled, as client-go's Get cannot.
func (q *Queue[T]) Get() (x T, ok bool) {
	q.lock()
	if q.queuedN > 0 { // without the closure and the turn of await
		// Read under the lock: once it is released a Done of x (from
		// another goroutine) may settle and recycle the batch.
		x = q.takeLocked(1, getOwner).keys[0]
		q.mu.Unlock()
		return x, true
	}
	q.mu.Unlock()
	err := q.await(context.Background(), &q.takeTurn, &q.activity, func() (bool, error) {
		if q.queuedN > 0 {
			x = q.takeLocked(1, getOwner).keys[0]
			return true, nil
		}
		if q.closed {
			return false, ErrClosed
		}
		return false, nil
	})
	if err != nil {
		var zero T
		return zero, false
	}
	return x, true
}

// Done completes x, taken by Get: it is removed, or queued again at the tail
// if it was added while in progress (Config.Rerun). It reports false, and
// does nothing, if x is not in progress from a Get.
func (q *Queue[T]) Done(x T) bool {
	h, ok := q.hash(x)
	if !ok {
		return false
	}
	q.lock()
	defer q.mu.Unlock()
	j, found := q.items.lookup(x, h)
	if !found {
		return false
	}
	l := q.items.at(j)
	if !l.taken() {
		return false
	}
	b := q.flights.at(l.flightIndex()).b
	if b.owner != getOwner {
		return false
	}
	q.settleLocked(b, 0, complete, j) // a batch of Get holds one item
	q.recycleLocked(b)
	return true
}

// ShutDown closes the queue as Close does. With drain it then waits until
// nothing is in progress (what is still queued stays for Get to hand out),
// or until a later ShutDown without drain stops the wait, as client-go's
// ShutDownWithDrain and ShutDown do.
func (q *Queue[T]) ShutDown(drain bool) {
	q.lock()
	q.stopDrain = !drain
	if !q.closed {
		q.closed = true
		q.room.broadcastLocked()
	}
	q.activity.broadcastLocked() // Get and a waiting drain look again
	q.mu.Unlock()
	if !drain {
		return
	}
	_ = q.await(context.Background(), nil, &q.activity, func() (bool, error) {
		return q.takenN == 0 || q.stopDrain, nil
	})
}

// Closed reports whether the queue is closed.
func (q *Queue[T]) Closed() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.closed
}
