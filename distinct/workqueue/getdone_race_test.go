package workqueue_test

import (
	"sync"
	"testing"

	"github.com/jobkit/jobkit/distinct/workqueue"
)

// A stray Done (a worker that calls Done twice, say) may settle an item that
// another worker's Get has just taken. Done of an item that is being processed
// is allowed, but Get must still return the item it took: never the zero
// value nor an item another Get returned. Get reads the item out of its batch
// after it has released the lock, when the stray Done may already have
// recycled the batch (and another Get reused it).
func TestGetReturnsTheItemItTookDespiteAConcurrentDone(t *testing.T) {
	const rounds = 20000
	q := workqueue.NewTyped[int]()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() { // the stray Done of a worker that calls Done twice
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				q.Done(7)
			}
		}
	}()
	bad := 0
	for range rounds {
		q.Add(7)
		x, shutdown := q.Get()
		if shutdown {
			t.Fatal("shutdown")
		}
		if x != 7 {
			bad++
		}
		q.Done(x)
	}
	close(stop)
	wg.Wait()
	q.ShutDown()
	if bad > 0 {
		t.Errorf("Get returned an item other than the one queued %d times in %d", bad, rounds)
	}
}
