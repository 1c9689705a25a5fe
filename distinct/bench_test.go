package distinct_test

import (
	"context"
	"testing"

	"github.com/jobkit/jobkit/distinct"
	"github.com/jobkit/jobkit/scope"
)

// These benchmarks measure the queue alone, single-threaded; bench/ compares
// it with its peers under concurrency.

// BenchmarkQueue_Add adds distinct items to a queue that holds between 2048
// and 6144 of them: every 4096 adds, 4096 items are taken and completed with
// the timer stopped. The queue's tables keep their size, so the figure is a
// steady-state Add that wakes nobody.
func BenchmarkQueue_Add(b *testing.B) {
	const floor, block = 2048, 4096
	q, _ := distinct.New[int](distinct.Config{})
	ctx := context.Background()
	drain := func(context.Context, []int) error { return nil }
	for i := range floor {
		q.Add(-1 - i)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%block == 0 && i > 0 {
			b.StopTimer()
			_ = q.Process(ctx, block, drain)
			b.StartTimer()
		}
		q.Add(i)
	}
}

// BenchmarkQueue_AddDuplicate adds an item that is already queued.
func BenchmarkQueue_AddDuplicate(b *testing.B) {
	q, _ := distinct.New[int](distinct.Config{})
	for i := range 1024 {
		q.Add(i)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		q.Add(i & 1023)
	}
}

// BenchmarkQueue_TakeComplete takes a batch, completes it and adds its items
// back, with 4096 items queued; ns/item is per item. The timestamps=on cases
// show what Config.Timestamps costs.
func BenchmarkQueue_TakeComplete(b *testing.B) {
	for _, tc := range []struct {
		name  string
		batch int
		cfg   distinct.Config
	}{
		{"batch=1", 1, distinct.Config{}},
		{"batch=16", 16, distinct.Config{}},
		{"batch=1/timestamps=on", 1, distinct.Config{Timestamps: true}},
		{"batch=16/timestamps=on", 16, distinct.Config{Timestamps: true}},
	} {
		batch := tc.batch
		b.Run("impl=Process/"+tc.name, func(b *testing.B) {
			q, _ := distinct.New[int](tc.cfg)
			for i := range 4096 {
				q.Add(i)
			}
			ctx := context.Background()
			var taken []int
			keep := func(_ context.Context, items []int) error {
				taken = append(taken[:0], items...)
				return nil
			}
			b.ReportAllocs()
			for b.Loop() {
				_ = q.Process(ctx, batch, keep)
				q.AddAll(taken)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/item")
		})
		b.Run("impl=Take/"+tc.name, func(b *testing.B) {
			q, _ := distinct.New[int](tc.cfg)
			for i := range 4096 {
				q.Add(i)
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				s := scope.New()
				items, _ := q.Take(ctx, s, batch)
				_ = s.Close(scope.Succeeded())
				q.AddAll(items)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/item")
		})
	}
}

// BenchmarkQueue_KeyPattern is the steady state of a queue of 1,000,000
// items, larger than the CPU caches: each op adds a new item and takes and
// completes the oldest. The patterns show what the table's placement does:
//
//   - sequence: IDs in order, placed by value, so adds and takes walk
//     memory in order;
//   - scrambled: the same IDs multiplied by an odd constant, so they look
//     random and every access is a cache miss, as for hashed keys;
//   - strided: multiples of 2³², which share one home slot under placement
//     by value: the table switches to mixed placement, and then costs what
//     scrambled keys cost.
func BenchmarkQueue_KeyPattern(b *testing.B) {
	const queued = 1_000_000
	for _, tc := range []struct {
		name string
		key  func(i int) int
	}{
		{"sequence", func(i int) int { return i }},
		{"scrambled", func(i int) int { return int(uint64(i) * 0x9E3779B97F4A7C15) }},
		{"strided", func(i int) int { return i << 32 }},
	} {
		b.Run("keys="+tc.name, func(b *testing.B) {
			var q distinct.Queue[int]
			for i := range queued {
				q.Add(tc.key(i))
			}
			ctx := context.Background()
			noop := func(context.Context, []int) error { return nil }
			b.ReportAllocs()
			for i := queued; b.Loop(); i++ {
				q.Add(tc.key(i))
				_ = q.Process(ctx, 1, noop)
			}
		})
	}
}
