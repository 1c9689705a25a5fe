package distinct_test

import (
	"context"
	"fmt"
	"strconv"
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

// BenchmarkQueue_KeyPattern is the steady state of a queue of 1,024 or
// 1,000,000 items (the latter larger than the CPU caches): each op adds a
// new item and takes and completes the oldest. The patterns show what the
// table's placement does:
//
//   - sequence: IDs in order, placed by value, so adds and takes walk
//     memory in order;
//   - ranges: four producers that each own a range of IDs (250,000 apart,
//     or 2²⁰ apart) and add it in order, interleaved: four sequences at
//     once;
//   - scrambled: the same IDs multiplied by an odd constant, so they look
//     random and every access is a cache miss, as for hashed keys;
//   - strided: multiples of 2³², which share one home slot under placement
//     by value: the table switches to mixed placement, and then costs what
//     scrambled keys cost.
func BenchmarkQueue_KeyPattern(b *testing.B) {
	ranges := func(apart int) func(i int) int {
		return func(i int) int { return i%4*apart + i/4 }
	}
	for _, queued := range []int{1024, 1_000_000} {
		for _, tc := range []struct {
			name string
			key  func(i int) int
		}{
			{"sequence", func(i int) int { return i }},
			{"ranges", ranges(250_000)},
			{"ranges-pow2", ranges(1 << 20)},
			{"scrambled", func(i int) int { return int(uint64(i) * 0x9E3779B97F4A7C15) }},
			{"strided", func(i int) int { return i << 32 }},
		} {
			b.Run(fmt.Sprintf("queued=%d/keys=%s", queued, tc.name), func(b *testing.B) {
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
}

// benchPaths runs BenchmarkQueue_Paths for keys made by mk.
func benchPaths[K comparable](b *testing.B, mk func(i int) K) {
	const pool = 1 << 16 // distinct keys, made before the timer, used in turn
	made := make([]K, pool)
	for i := range made {
		made[i] = mk(i)
	}
	key := func(i int) K { return made[i%pool] }
	ctx := context.Background()
	nop := func(context.Context, []K) error { return nil }
	const backlog = 1024
	setup := func(b *testing.B) (*distinct.Queue[K], int) {
		q, _ := distinct.New[K](distinct.Config{})
		for i := range backlog {
			q.Add(key(i))
		}
		b.ReportAllocs()
		return q, backlog
	}
	// work: Process in a loop (Work settles and takes under one lock; on one
	// goroutine the loop is the same).
	b.Run("path=work", func(b *testing.B) {
		q, next := setup(b)
		for b.Loop() {
			q.Add(key(next))
			next++
			_ = q.Process(ctx, 1, nop)
		}
	})
	// scope: scope.Run around Take, settled when the scope closes.
	b.Run("path=scope", func(b *testing.B) {
		q, next := setup(b)
		body := func(ctx context.Context, s *scope.Scope) error {
			_, err := q.Take(ctx, s, 1)
			return err
		}
		for b.Loop() {
			q.Add(key(next))
			next++
			_ = scope.Run(ctx, body)
		}
	})
	// scope-append: the same with TakeAppend into a buffer of the caller's.
	b.Run("path=scope-append", func(b *testing.B) {
		q, next := setup(b)
		var buf []K
		body := func(ctx context.Context, s *scope.Scope) error {
			var err error
			buf, err = q.TakeAppend(ctx, s, 1, buf[:0])
			return err
		}
		for b.Loop() {
			q.Add(key(next))
			next++
			_ = scope.Run(ctx, body)
		}
	})
}

type benchJobID int64

type benchJobKey struct {
	Tenant uint32
	ID     uint64
}

// BenchmarkQueue_Paths is one add and one take-and-complete of one item per
// op, on one goroutine, with 1024 items queued, for each key kind and
// consumer path: the single-goroutine cost of each path, which bench/
// measures under concurrency. The keys are made before the timer starts.
func BenchmarkQueue_Paths(b *testing.B) {
	b.Run("keys=ordered", func(b *testing.B) { benchPaths(b, func(i int) int { return i }) })
	b.Run("keys=scrambled", func(b *testing.B) {
		benchPaths(b, func(i int) int { return int(uint64(i) * 0x9E3779B97F4A7C15) })
	})
	b.Run("keys=string", func(b *testing.B) {
		benchPaths(b, func(i int) string { return "default/pod-" + strconv.Itoa(i) })
	})
	b.Run("keys=struct", func(b *testing.B) {
		benchPaths(b, func(i int) benchJobKey { return benchJobKey{uint32(i % 16), uint64(i)} })
	})
	b.Run("keys=named", func(b *testing.B) { benchPaths(b, func(i int) benchJobID { return benchJobID(i) }) })
}
