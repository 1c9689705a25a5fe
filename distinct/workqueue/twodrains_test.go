package workqueue_test

import (
	"testing"
	"testing/synctest"
)

// Two ShutDownWithDrain calls wait for the same in-progress item; the item was
// added again while it was processed (dirty). When Done is called, nothing is
// in progress any more: both drains must return, on either path.
func TestTwoDrainsBothReturnAfterDoneOfDirtyItem(t *testing.T) {
	for _, impl := range impls {
		t.Run(impl.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := impl.new()
				q.Add(1)
				x := get(t, q)
				q.Add(1) // dirty: queued again at Done
				d1, d2 := make(chan struct{}), make(chan struct{})
				go func() { q.ShutDownWithDrain(); close(d1) }()
				go func() { q.ShutDownWithDrain(); close(d2) }()
				synctest.Wait()
				q.Done(x)
				synctest.Wait()
				returned := 0
				for _, d := range []chan struct{}{d1, d2} {
					select {
					case <-d:
						returned++
					default:
					}
				}
				if returned != 2 {
					t.Errorf("%d of 2 ShutDownWithDrain calls returned after the last Done", returned)
				}
				q.ShutDown() // releases a drain left waiting
				<-d1
				<-d2
				// What was queued again is still handed out.
				if y, shutdown := q.Get(); shutdown || y != 1 {
					t.Errorf("Get() = %d, %v; want 1, false", y, shutdown)
				}
				q.Done(1)
			})
		})
	}
}
