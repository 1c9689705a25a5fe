package governor_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/jobkit/jobkit/governor"
)

// A blocked Acquire short of room holds up later work (TryAcquire refuses
// even the zero Weight). When its context is cancelled, the hold lifts and
// TryAcquire admits again: that is a change that lets refused work in, and
// Changed must report it, as its documentation promises ("closed at the
// next change that may let refused work in"). A scheduler waiting on
// Changed otherwise sits idle, with free slots, until the next sample.
func TestChangedOnCancelledHoldingWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A limit of 1000 bytes, 900 used, limits off: 100 bytes of room.
		g, _ := setup(t, governor.Config{Slots: 2, MaxCPUPercent: 100, MaxMemoryPercent: 100}, reading(0, 900))
		ctx, cancel := context.WithCancel(t.Context())
		c := acquireAsync(ctx, g, governor.Weight{Memory: 500}) // valid, short of room: holds
		synctest.Wait()
		if !blocked(c) {
			t.Fatal("Acquire of 500 bytes with 100 of room returned")
		}
		changed := g.Changed()
		if tryAcquire(g) {
			t.Fatal("TryAcquire admitted while a waiter holds up later work")
		}
		cancel()
		synctest.Wait()
		if r := <-c; !errors.Is(r.err, context.Canceled) {
			t.Fatalf("cancelled Acquire = %v", r.err)
		}
		wasClosed := closed(changed)
		if !tryAcquire(g) { // its Release closes changed: look before
			t.Fatal("TryAcquire refused once the holding waiter left")
		}
		if !wasClosed {
			t.Error("Changed not closed when the waiter that held up later work was cancelled: TryAcquire now admits, but a watcher sleeps until the next sample")
		}
	})
}
