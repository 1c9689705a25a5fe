package bench

import (
	"context"
	"errors"
	"testing"
	"time"
)

// errBatch is the failure of every tenth batch in scenario 3.
var errBatch = errors.New("bench: batch failed")

// BenchmarkRequeue is scenario 3, batch take and failure requeue. One
// consumer takes batches of up to max items from a queue preloaded with
// 100,000 keys in ascending order (preloaded again, untimed, whenever it
// empties) until b.N items have completed; every tenth batch fails and is
// requeued the implementation's way: jobkit puts it back in its original
// position, client-go and the priority queue add it again (at the tail), the
// channel sends it again (at the tail). Peers without a batch take build a
// batch from Len and Get, which is safe here because there is one consumer.
//
// Reported: ns/item per completed item, and inversions: the number of
// completions of a key smaller than the key completed just before it. Keys
// are added in ascending order, so a queue that requeues in original
// position completes them in ascending order and has none; a queue that
// requeues at the tail completes a failed key after larger ones. Retakes are
// not completions, so taking a failed batch again is no inversion.
func BenchmarkRequeue(b *testing.B) {
	preload := sized(100_000, 1_000)
	forEachImpl(b, allImpls, func(b *testing.B, f Factory[int]) {
		for _, max := range []int{1, 16, 128} {
			b.Run(name("max=%d", max), func(b *testing.B) {
				runRequeue(b, f, preload, max)
			})
		}
	})
}

func runRequeue(b *testing.B, f Factory[int], preload, max int) {
	b.ReportAllocs()
	q := f.New(Options{SoleConsumer: true, Capacity: preload})
	defer q.Stop()
	k := q.Consumer()
	var (
		next, batches         int
		completed, inversions int
		last                  = -1
	)
	work := func(_ context.Context, items []int) error {
		batches++
		if batches%10 == 0 {
			return errBatch
		}
		for _, x := range items {
			if x < last {
				inversions++
			}
			last = x
		}
		completed += len(items)
		return nil
	}
	fill := func() {
		for range preload {
			q.Add(next)
			next++
		}
		q.Len() // let the priority queue take its buffered adds in
	}
	fill()
	b.ResetTimer()
	t0 := time.Now()
	var untimed time.Duration
	for completed < b.N {
		if q.Len() == 0 { // sole consumer: Len is exact
			b.StopTimer()
			u := time.Now()
			fill()
			untimed += time.Since(u)
			b.StartTimer()
		}
		if err := k.Process(max, work); err != nil && err != errBatch {
			b.Fatal(err)
		}
	}
	elapsed := time.Since(t0) - untimed
	b.StopTimer()
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(completed), "ns/item")
	b.ReportMetric(float64(inversions), "inversions")
	b.ReportMetric(float64(inversions)/float64(completed), "inversions/item")
}
