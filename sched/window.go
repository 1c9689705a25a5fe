package sched

import (
	"sync"
	"time"
)

// windowSpan is the span of a queue's recent outcomes, as Summaries reports
// them, in windowBuckets buckets.
const (
	windowSpan    = time.Minute
	windowBuckets = 60
)

// window counts the runs of a queue that succeeded and failed over the last
// windowSpan. Each run is added as it ends.
type window struct {
	mu     sync.Mutex
	ids    [windowBuckets]int64 // the bucket (second since the scheduler's epoch) each slot holds
	ok, ko [windowBuckets]int
}

const bucketWidth = int64(windowSpan / windowBuckets)

// add counts ok successes and ko failures at now (nanoseconds since the
// scheduler's epoch; negative before it).
func (w *window) add(now int64, ok, ko int) {
	if ok == 0 && ko == 0 {
		return
	}
	id := now / bucketWidth
	i := (id%windowBuckets + windowBuckets) % windowBuckets // not negative: an index
	w.mu.Lock()
	if w.ids[i] != id {
		w.ids[i], w.ok[i], w.ko[i] = id, 0, 0
	}
	w.ok[i] += ok
	w.ko[i] += ko
	w.mu.Unlock()
}

// sums returns the successes and failures in the window that ends at now
// (as for add).
func (w *window) sums(now int64) (ok, ko int) {
	cur := now / bucketWidth
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, id := range w.ids {
		if id > cur-windowBuckets && id <= cur {
			ok += w.ok[i]
			ko += w.ko[i]
		}
	}
	return ok, ko
}
