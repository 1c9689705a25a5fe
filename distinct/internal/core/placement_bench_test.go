package core

import (
	"context"
	"fmt"
	"testing"
)

// placementPatterns are integer key patterns for BenchmarkPlacement: key(i)
// is the i-th key added.
var placementPatterns = []struct {
	name string
	key  func(i int) int
}{
	{"sequence", func(i int) int { return i }},
	{"ranges", func(i int) int { return i%4*250_000 + i/4 }},
	{"ranges-pow2", func(i int) int { return i%4<<20 + i/4 }},
	{"ranges-16", func(i int) int { return i%16*1_000_003 + i/16 }},
	// Two producers at different speeds: one adds three IDs of its range
	// for every one of the other's.
	{"two-speeds", func(i int) int {
		if i%4 == 3 {
			return 1<<30 + i/4
		}
		return i/4*3 + i%4
	}},
	{"stride-3", func(i int) int { return 3 * i }},
	{"stride-1024", func(i int) int { return i << 10 }},
	{"scrambled", func(i int) int { return int(uint64(i) * 0x9E3779B97F4A7C15) }},
	{"strided", func(i int) int { return i << 32 }},
}

// BenchmarkPlacement compares, for each key pattern, the queue's own
// placement (placement=auto: by value while the keys do not cluster, then
// mixed) with mixed placement from the start (placement=hash), in the
// steady state of a queue of 1,024 or 1,000,000 items: each op adds a new
// key and takes and completes the oldest. No pattern should make auto
// slower than hash: keys that defeat placement by value must switch early.
// The figures include the switch, once per run.
func BenchmarkPlacement(b *testing.B) {
	ctx := context.Background()
	noop := func(context.Context, []int) error { return nil }
	for _, queued := range []int{1024, 1_000_000} {
		for _, p := range placementPatterns {
			for _, place := range []string{"auto", "hash"} {
				b.Run(fmt.Sprintf("queued=%d/keys=%s/placement=%s", queued, p.name, place), func(b *testing.B) {
					var q Queue[int]
					q.Init(Config{})
					if place == "hash" {
						q.lock()
						q.items.resize(minTable)
						q.items.place = byMix
						q.mu.Unlock()
					}
					for i := range queued {
						q.Add(p.key(i))
					}
					b.ReportAllocs()
					for i := queued; b.Loop(); i++ {
						q.Add(p.key(i))
						_ = q.Process(ctx, 1, noop)
					}
					if place == "hash" && q.items.place != byMix {
						b.Fatal("hashed placement switched")
					}
				})
			}
		}
	}
}
