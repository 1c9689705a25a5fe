package workqueue_test

import (
	"testing"
	"testing/synctest"

	"github.com/jobkit/jobkit/distinct/workqueue"
)

// A ShutDown stops only the ShutDownWithDrain calls waiting then: a
// ShutDownWithDrain called after it still waits for the items handed out to
// be Done, as in client-go, where each call sets the drain flag anew.
func TestDrainAfterShutDownStillWaits(t *testing.T) {
	for _, impl := range impls {
		t.Run(impl.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := impl.new()
				q.Add(1)
				x := get(t, q)
				q.ShutDown()
				done := make(chan struct{})
				go func() { q.ShutDownWithDrain(); close(done) }()
				synctest.Wait()
				select {
				case <-done:
					t.Error("ShutDownWithDrain after ShutDown returned with an item still processed")
				default:
				}
				q.Done(x)
				synctest.Wait()
				select {
				case <-done:
				default:
					t.Error("ShutDownWithDrain still waits after the last Done")
					q.ShutDown()
					<-done
				}
			})
		})
	}
}

// Add, Get and Done allocate nothing in steady state, as documented: a
// settled Get recycles what it took.
func TestAddGetDoneAllocatesNothing(t *testing.T) {
	q := workqueue.NewTyped[int]()
	i := 0
	allocs := testing.AllocsPerRun(100, func() {
		i++
		q.Add(i)
		x, shutdown := q.Get()
		if shutdown || x != i {
			t.Fatalf("Get() = %d, %v; want %d, false", x, shutdown, i)
		}
		q.Done(x)
	})
	if allocs != 0 {
		t.Errorf("Add, Get and Done allocate %v times in steady state, want 0", allocs)
	}
	q.ShutDown()
}
