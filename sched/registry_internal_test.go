package sched

import (
	"sync"
	"testing"
	"time"

	"github.com/puzpuzpuz/xsync/v4"
)

// BenchmarkRunningRegistry measures the one concurrent map on the
// scheduler's hot path: the metrics' registry of runs in progress, which
// every run writes twice (start, end) and the metrics loop reads twice a
// second. impl=mutex is a sync.Mutex and a built-in map (what queueMetrics
// uses); impl=xsync is github.com/puzpuzpuz/xsync/v4's Map. Workers
// register and unregister their own batch concurrently.
func BenchmarkRunningRegistry(b *testing.B) {
	now := time.Now()
	b.Run("impl=mutex", func(b *testing.B) {
		var mu sync.Mutex
		m := make(map[any]time.Time)
		b.RunParallel(func(pb *testing.PB) {
			key := new(int)
			for pb.Next() {
				mu.Lock()
				m[key] = now
				mu.Unlock()
				mu.Lock()
				delete(m, key)
				mu.Unlock()
			}
		})
	})
	b.Run("impl=xsync", func(b *testing.B) {
		m := xsync.NewMap[any, time.Time]()
		b.RunParallel(func(pb *testing.PB) {
			key := new(int)
			for pb.Next() {
				m.Store(key, now)
				m.Delete(key)
			}
		})
	})
}
