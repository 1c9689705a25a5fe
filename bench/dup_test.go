package bench

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// dupImpls are the implementations that deduplicate. jobkit-rerun is jobkit
// with client-go's "dirty" semantics (Config.Rerun): an add of an item in
// progress runs it once more, where plain jobkit rejects it.
var dupImpls = []string{"jobkit", "jobkit-rerun", "clientgo", "priorityqueue"}

// holdTime is how long a consumer of scenario 2 holds each item.
const holdTime = 10 * time.Microsecond

// hotKey spreads add i over a hot set of k keys in a scrambled order.
func hotKey(i, k int) int { return int(uint64(i) * 0x9E3779B97F4A7C15 >> 17 % uint64(k)) }

// BenchmarkDuplicates is scenario 2, duplicate-heavy adds: P producers make
// b.N adds drawn from a hot set of keys while C consumers hold each item they
// take for about 10 µs (a sleep). The timer covers the adds; ns/op is ns per
// Add. accepted/add is the fraction of adds that created work, measured as
// the items processed once the queue has quiesced (every accepted add is
// processed exactly once, in every implementation); processed/add counts the
// items processed while the adds ran; heap-B is the growth of the live heap
// over the timed window. The channel has no deduplication and is left out:
// every add would be work.
func BenchmarkDuplicates(b *testing.B) {
	const producers, consumers = 4, 16
	forEachImpl(b, dupImpls, func(b *testing.B, f Factory[int]) {
		for _, keys := range []int{100, 10_000} {
			b.Run(name("keys=%d/p=%d/c=%d", keys, producers, consumers), func(b *testing.B) {
				runDuplicates(b, f, keys, producers, consumers)
			})
		}
	})
}

func runDuplicates(b *testing.B, f Factory[int], keys, producers, consumers int) {
	b.ReportAllocs()
	n := b.N
	q := f.New(Options{})
	var (
		start               = make(chan struct{})
		processed, inflight atomic.Int64
		cons, prods         sync.WaitGroup
	)
	for range consumers {
		cons.Go(func() {
			k := q.Consumer()
			hold := func(_ context.Context, items []int) error {
				inflight.Add(1)
				time.Sleep(holdTime * time.Duration(len(items)))
				processed.Add(int64(len(items)))
				inflight.Add(-1)
				return nil
			}
			<-start
			for {
				if err := k.Process(1, hold); err != nil {
					if !errors.Is(err, ErrStopped) {
						b.Error(err)
					}
					return
				}
			}
		})
	}
	for p := range producers {
		prods.Go(func() {
			<-start
			for i := p; i < n; i += producers {
				q.Add(hotKey(i, keys))
			}
		})
	}
	h0 := heapAfterGC()
	b.ResetTimer()
	close(start)
	prods.Wait()
	b.StopTimer()
	during := processed.Load()
	h1 := heapAfterGC()

	// Quiesce: nothing queued, nothing in progress, nothing processed, twice
	// a millisecond apart.
	for last, calm := int64(-1), 0; calm < 2; {
		time.Sleep(time.Millisecond)
		p := processed.Load()
		if q.Len() == 0 && inflight.Load() == 0 && p == last {
			calm++
		} else {
			calm = 0
		}
		last = p
	}
	total := processed.Load()
	if j, ok := q.(*jobkit[int]); ok {
		if added := j.Stats().Added; added != uint64(total) {
			b.Errorf("jobkit accepted %d adds but processed %d items", added, total)
		}
	}
	q.Stop()
	cons.Wait()
	b.ReportMetric(float64(total)/float64(n), "accepted/add")
	b.ReportMetric(float64(during)/float64(n), "processed/add")
	b.ReportMetric(float64(int64(h1)-int64(h0)), "heap-B")
}

// BenchmarkQueue_Add measures one Add without consumers, on one goroutine
// and on all (RunParallel):
//
//   - op=duplicate: the hot set of keys is queued beforehand and every add is
//     a rejected duplicate. The priority queue's adds are asynchronous: its
//     figure is the cost of buffering the add, not of deduplicating it.
//   - op=distinct: every add is a new key into a queue nobody waits on; for
//     jobkit this is the Add that wakes nobody, which must not allocate
//     (allocs/op 0; B/op is the queue's amortised growth).
func BenchmarkQueue_Add(b *testing.B) {
	forEachImpl(b, []string{"jobkit", "clientgo", "priorityqueue"}, func(b *testing.B, f Factory[int]) {
		for _, keys := range []int{100, 10_000} {
			for _, par := range []bool{false, true} {
				b.Run(name("op=duplicate/keys=%d/parallel=%t", keys, par), func(b *testing.B) {
					b.ReportAllocs()
					q := f.New(Options{})
					defer q.Stop()
					for x := range keys {
						q.Add(x)
					}
					q.Len() // let the priority queue take its buffered adds in
					b.ResetTimer()
					if par {
						var next atomic.Int64
						b.RunParallel(func(pb *testing.PB) {
							i := int(next.Add(1)) * 7919
							for pb.Next() {
								q.Add(hotKey(i, keys))
								i++
							}
						})
					} else {
						for i := range b.N {
							q.Add(hotKey(i, keys))
						}
					}
					b.StopTimer()
				})
			}
		}
		b.Run("op=distinct", func(b *testing.B) {
			b.ReportAllocs()
			q := f.New(Options{})
			defer q.Stop()
			m0 := mallocs()
			b.ResetTimer()
			for i := range b.N {
				q.Add(i)
			}
			b.StopTimer()
			b.ReportMetric(float64(mallocs()-m0)/float64(b.N), "allocs/item")
		})
	})
}

// BenchmarkQueue_AddProcess is the steady state of one goroutine that adds an
// item and then processes it (take and complete): nobody ever waits, so for
// jobkit neither the add nor the take may allocate.
func BenchmarkQueue_AddProcess(b *testing.B) {
	forEachImpl(b, allImpls, func(b *testing.B, f Factory[int]) {
		b.ReportAllocs()
		q := f.New(Options{})
		k := q.Consumer()
		noop := func(context.Context, []int) error { return nil }
		for i := range 1024 { // warm up: grow the queue's tables
			q.Add(i)
			_ = k.Process(1, noop)
		}
		m0 := mallocs()
		b.ResetTimer()
		for i := range b.N {
			q.Add(i)
			if err := k.Process(1, noop); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(mallocs()-m0)/float64(b.N), "allocs/item")
		q.Stop()
	})
}
