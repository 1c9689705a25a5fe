package workqueue_test

import (
	"fmt"
	"testing"

	"github.com/jobkit/jobkit/distinct/workqueue"
)

// BenchmarkQueue is client-go's BenchmarkQueue on this package: one
// goroutine adds, gets and marks done 100 string keys, one at a time, on a
// new queue per op. bench/ runs it beside client-go's queue.
func BenchmarkQueue(b *testing.B) {
	keys := make([]string, 100)
	for i := range keys {
		keys[i] = fmt.Sprintf("key-%d", i)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		q := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{})
		b.StartTimer()
		for _, k := range keys {
			q.Add(k)
			key, _ := q.Get()
			q.Done(key)
		}
	}
}
