package bench

import (
	"context"
	"testing"
	"time"
)

// BenchmarkScale is scenario 4: the cost of one take and complete, and the
// memory of a queued entry, with 1,000 or 1,000,000 items queued and 100,000
// in progress (held by Take under open scopes, or Get without Done).
//
// Setup, untimed: B/entry is the growth of the live heap from an empty queue
// to one holding the queued keys, divided by their number, measured on a
// queue of its own; the channel's figure is its buffer, sized for the keys.
// Then, on a fresh queue, 100,000 keys are added and taken into progress
// (B/inprogress is the heap's growth over that, per item, scopes included)
// and the queued keys are added. Timed: each op takes and completes one item
// (Process with max 1), and the queue is topped up with fresh keys every
// chunk of ops (chunk = min(1024, queued/10)), so that the queued count stays
// between queued-chunk and queued. ns/op includes those adds; take-ns/op is
// the take-and-complete time alone, timed around each chunk.
//
// With -short or JOBKIT_BENCH_SMALL=1 the sizes are 1,000 and 10,000 queued
// and 1,000 in progress.
func BenchmarkScale(b *testing.B) {
	inProgress := sized(100_000, 1_000)
	forEachImpl(b, allImpls, func(b *testing.B, f Factory[int]) {
		for _, queued := range []int{1_000, sized(1_000_000, 10_000)} {
			b.Run(name("queued=%d/inprogress=%d", queued, inProgress), func(b *testing.B) {
				runScale(b, f, queued, inProgress)
			})
		}
	})
}

func runScale(b *testing.B, f Factory[int], queued, inProgress int) {
	b.ReportAllocs()
	perEntry := bytesPerEntry(f, queued)

	h0 := heapAfterGC()
	q := f.New(Options{Capacity: queued + inProgress})
	defer q.Stop()
	next := 0
	add := func(n int) {
		for range n {
			q.Add(next)
			next++
		}
		q.Len() // let the priority queue take its buffered adds in
	}
	add(inProgress)
	release := q.Hold(inProgress)
	defer release()
	h1 := heapAfterGC()
	add(queued)

	k := q.Consumer()
	noop := func(context.Context, []int) error { return nil }
	chunk := min(1024, queued/10)
	var took time.Duration
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(chunk, b.N-done)
		t0 := time.Now()
		for range n {
			if err := k.Process(1, noop); err != nil {
				b.Fatal(err)
			}
		}
		took += time.Since(t0)
		add(n)
		done += n
	}
	b.StopTimer()
	b.ReportMetric(float64(took.Nanoseconds())/float64(b.N), "take-ns/op")
	b.ReportMetric(perEntry, "B/entry")
	b.ReportMetric(float64(int64(h1)-int64(h0))/float64(inProgress), "B/inprogress")
}

// bytesPerEntry returns the growth of the live heap from nothing to a queue
// of f holding n queued keys, per key.
func bytesPerEntry(f Factory[int], n int) float64 {
	h0 := heapAfterGC()
	q := f.New(Options{Capacity: n})
	for x := range n {
		q.Add(x)
	}
	q.Len() // let the priority queue take its buffered adds in
	h1 := heapAfterGC()
	q.Stop()
	return float64(int64(h1)-int64(h0)) / float64(n)
}
