package workqueue_test

import (
	"fmt"
	"sync"

	"github.com/jobkit/jobkit/distinct/workqueue"
)

// A controller's worker loop, unchanged from client-go's but for the import.
func Example() {
	q := workqueue.NewTyped[string]()
	q.Add("default/pod-1")
	q.Add("default/pod-2")
	q.Add("default/pod-1") // already queued: nothing happens

	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			key, shutdown := q.Get()
			if shutdown {
				return
			}
			fmt.Println("reconcile", key)
			q.Done(key)
		}
	})
	q.ShutDownWithDrain() // Get hands out what is queued, then reports shutdown
	wg.Wait()
	// Output:
	// reconcile default/pod-1
	// reconcile default/pod-2
}
