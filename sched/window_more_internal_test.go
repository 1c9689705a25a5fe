package sched

import "testing"

// The window counts outcomes at instants before the scheduler's epoch
// (negative nanoseconds: a Clock that went back more than a century, or
// broke far from now and left the system clock) without panicking.
// (From mutation testing: add indexed its buckets with id % windowBuckets, negative for a
// negative id: index out of range, in finishLocked, before the batch's
// permit was released.)
func TestWindowTakesInstantsBeforeTheEpoch(t *testing.T) {
	t.Parallel()
	var w window
	now := -5*bucketWidth - 1
	func() {
		defer func() {
			if v := recover(); v != nil {
				t.Fatalf("add at %d panicked: %v", now, v)
			}
		}()
		w.add(now, 2, 1)
	}()
	if ok, ko := w.sums(now); ok != 2 || ko != 1 {
		t.Errorf("sums = %d, %d; want 2, 1", ok, ko)
	}
}
