package core

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"
	"unsafe"

	"github.com/jobkit/jobkit/internal/keys"
	"pgregory.net/rapid"
)

// hash is the hash of a valid key k, for the tests.
func hash[K comparable](k K) uint64 {
	h, ok := keys.HashWith(keys.LayoutOf[K](), k)
	if !ok {
		panic("distinct: invalid key in a test")
	}
	return h
}

// TestTableMatchesMap drives the table and a built-in map with the same
// random inserts and deletes and checks the table's structure after every
// step. Keys come from a small random space (so that runs collide, wrap and
// shift back), from a sequence (ordered placement's good case) or from
// multiples of a power of two (its bad case, which must switch the table to
// scattered placement without losing anything).
func TestTableMatchesMap(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		var tb table[int, int]
		m := map[int]int{}
		stride := 1 << rapid.IntRange(0, 24).Draw(t, "log2 stride")
		next := 0
		keys := []int{}
		key := func(t *rapid.T) int {
			switch rapid.IntRange(0, 3).Draw(t, "kind") {
			case 0: // new, in sequence
				next++
				keys = append(keys, next*stride)
				return next * stride
			case 1: // seen before
				if len(keys) > 0 {
					return rapid.SampledFrom(keys).Draw(t, "old")
				}
			}
			return rapid.IntRange(-50, 200).Draw(t, "k") * stride
		}
		t.Repeat(map[string]func(*rapid.T){
			"put": func(t *rapid.T) {
				k, v := key(t), rapid.Int().Draw(t, "v")
				if p := tb.put(k, hash(k), v); *p != v {
					t.Fatalf("put(%d) stored %d", k, *p)
				}
				m[k] = v
			},
			"put many": func(t *rapid.T) {
				for range rapid.IntRange(1, 300).Draw(t, "n") {
					next++
					k := next * stride
					tb.put(k, hash(k), k)
					m[k] = k
				}
			},
			"del": func(t *rapid.T) {
				k := key(t)
				want, present := m[k]
				got, ok := tb.del(k, hash(k))
				if ok != present || got != want {
					t.Fatalf("del(%d) = %d, %v, want %d, %v", k, got, ok, want, present)
				}
				delete(m, k)
			},
			"del oldest": func(t *rapid.T) {
				for _, k := range keys[:min(len(keys), rapid.IntRange(1, 300).Draw(t, "n"))] {
					tb.del(k, hash(k))
					delete(m, k)
				}
			},
			"": func(t *rapid.T) {
				checkTable(t, &tb)
				if tb.len() != len(m) {
					t.Fatalf("len %d, want %d", tb.len(), len(m))
				}
				for k, want := range m {
					if p := tb.get(k, hash(k)); p == nil || *p != want {
						t.Fatalf("get(%d) = %v, want %d", k, p, want)
					}
				}
				for _, k := range []int{-1, next*stride + stride, 1 << 40} {
					if _, ok := m[k]; !ok && tb.get(k, hash(k)) != nil {
						t.Fatalf("get(%d) found an absent key", k)
					}
				}
				n := 0
				tb.all(func(k int, v *int) bool {
					if m[k] != *v {
						t.Fatalf("all yielded %d=%d, want %d", k, *v, m[k])
					}
					n++
					return true
				})
				if n != len(m) {
					t.Fatalf("all yielded %d entries, want %d", n, len(m))
				}
			},
		})
	})
}

// distances returns the sum of the entries' distances from their homes.
func (t *table[K, V]) distances() int {
	sum := 0
	for i := range t.slots {
		sum += int(t.slots[i].ctrl & 0xff)
	}
	return sum
}

// checkTable checks the Robin Hood invariants: every entry's control word
// holds its tag and its true distance from home, within the limit, and along
// a run the distance grows by at most one per slot (entries are in the order
// of their homes), so that lookups may stop early.
func checkTable[V any](t interface{ Fatalf(string, ...any) }, tb *table[int, V]) {
	n, mask := 0, len(tb.slots)-1
	for i, s := range tb.slots {
		if s.ctrl == 0 {
			continue
		}
		n++
		p := tb.home(hash(s.key))
		d := (i - int(p)) & mask
		if s.ctrl != tag(p)|uint16(d) {
			t.Fatalf("slot %d (key %d): control %#x, want %#x", i, s.key, s.ctrl, tag(p)|uint16(d))
		}
		if limit := distanceLimit(tb.place == byValue); d > limit {
			t.Fatalf("slot %d (key %d): distance %d past the limit %d", i, s.key, d, limit)
		}
		if next := tb.slots[(i+1)&mask]; next.ctrl != 0 && int(next.ctrl&0xff) > d+1 {
			t.Fatalf("slot %d: distance %d follows %d", (i+1)&mask, next.ctrl&0xff, d)
		}
		if tb.place == byValue && d > 0 { // a run off home: bounded
			run := 0
			for j := i; run <= orderedLimit && tb.slots[j].ctrl&0xff != 0; j = (j - 1) & mask {
				run++
			}
			if run > orderedLimit {
				t.Fatalf("slot %d ends a run of more than %d entries off home", i, orderedLimit)
			}
		}
	}
	if n != tb.n {
		t.Fatalf("%d entries, count says %d", n, tb.n)
	}
}

// TestTablePlacement checks when integer keys keep placement by value and
// when they are mixed.
func TestTablePlacement(t *testing.T) {
	t.Parallel()
	// fill adds keys from next(i) for i < n, keeping only the last window
	// of them, as a queue does, and returns the table.
	fill := func(n, window int, next func(i int) int) *table[int, struct{}] {
		var tb table[int, struct{}]
		keys := make([]int, 0, n)
		for i := range n {
			k := next(i)
			tb.put(k, hash(k), struct{}{})
			keys = append(keys, k)
			if i >= window {
				k := keys[i-window]
				tb.del(k, hash(k))
			}
		}
		checkTable(t, &tb)
		for _, k := range keys[max(0, n-window):] {
			if tb.get(k, hash(k)) == nil {
				t.Fatalf("key %d lost", k)
			}
		}
		return &tb
	}
	meanDistance := func(tb *table[int, struct{}]) float64 {
		return float64(tb.distances()) / float64(tb.n)
	}

	// One sequence: every key in its home slot.
	if tb := fill(100_000, 50_000, func(i int) int { return i + 1_000_000 }); tb.place != byValue || tb.distances() != 0 {
		t.Errorf("a sequence: placement %d, mean distance %.2f; want by value, 0", tb.place, meanDistance(tb))
	}
	// Four interleaved sequences at different speeds, spread over twice the
	// window: still placed by value, and still close to home.
	spread := func(i int) int {
		lane := i % 4
		return lane + 4*((i/4)*(lane+1)/2)
	}
	if tb := fill(200_000, 30_000, spread); tb.place != byValue || meanDistance(tb) > 1 {
		t.Errorf("interleaved sequences: placement %d, mean distance %.2f; want by value, ≤ 1", tb.place, meanDistance(tb))
	}
	// A sequence with a few keys far ahead whose homes lie just ahead of
	// the tail: the sequence must not pile up behind them in one long run
	// off home (one deletion would move it all), so the table grows and
	// mixes. checkTable in fill checks the runs.
	obstacle := func(i int) int {
		if i%10_000 == 5_000 {
			return i + 10 + 1<<40
		}
		return i
	}
	if tb := fill(50_000, 50_000, obstacle); tb.place != byMix {
		t.Errorf("a sequence with keys far ahead: placement %d, want mixed", tb.place)
	}
	// Keys that share a home, and multiples of 64, which crowd one slot in
	// 64: mixed.
	for _, stride := range []int{1 << 32, 64} {
		if tb := fill(20_000, 20_000, func(i int) int { return i * stride }); tb.place != byMix {
			t.Errorf("multiples of %d: placement %d, mean distance %.2f; want mixed", stride, tb.place, meanDistance(tb))
		}
	}
	// Other key types are placed by maphash.
	var s table[string, int]
	s.put("a", hash("a"), 1)
	if s.place != byHash {
		t.Errorf("string keys: placement %d, want by hash", s.place)
	}
}

// TestMixSpreadsStridedKeys checks that mixing spreads the keys that get
// mixed, multiples of powers of two, over the slots as a random function
// would: 100,000 keys into 2¹⁸ slots hit about 83% distinct slots. One round
// of the multiply, for some keys, leaves whole ranges of slots unused.
func TestMixSpreadsStridedKeys(t *testing.T) {
	t.Parallel()
	const n, slots = 100_000, 1 << 18
	r := rand.New(rand.NewPCG(1, 2))
	used := make([]bool, slots)
	for range 50 {
		xor1, xor2, mul := r.Uint64(), r.Uint64(), r.Uint64()|1
		for _, shift := range []int{6, 20, 32, 40, 47} { // i < 2¹⁷: the keys stay distinct
			clear(used)
			distinct := 0
			for i := range n {
				h := mixWith(uint64(i)<<shift, xor1, xor2, mul) & (slots - 1)
				if !used[h] {
					used[h] = true
					distinct++
				}
			}
			if distinct < n*8/10 {
				t.Fatalf("keys i<<%d hit %d distinct slots of %d, want about %d", shift, distinct, slots, n*83/100)
			}
		}
	}
}

// TestSwingingQueueKeepsItsMemory checks the hysteresis of shrinking: a
// queue whose length swings between empty and up to 6,000 items, as a
// queue bounded by its consumers does, keeps its tables and its ring once
// they have grown, instead of reallocating them on every swing (wider
// swings pay a resize now and then, O(1) per operation amortized); and a
// burst still gives its memory back once it has drained.
func TestSwingingQueueKeepsItsMemory(t *testing.T) {
	t.Parallel()
	for _, swing := range []int{1500, 6000} {
		var q Queue[string]
		keys := make([]string, 40*swing)
		for i := range keys {
			keys[i] = "default/pod-" + string(rune('a'+i%26)) + itoa(i)
		}
		next := 0
		var grows int
		var lastQ, lastR *byte
		for cycle := range 20 {
			for range swing {
				q.Add(keys[next%len(keys)])
				next++
			}
			for q.Len() > 0 {
				q.lock()
				b := q.takeLocked(1, nil)
				q.settleAllLocked(b, complete)
				q.mu.Unlock()
			}
			pq := (*byte)(unsafePointer(q.items.slots))
			pr := (*byte)(unsafePointer(q.fresh.buf))
			if cycle > 0 && (pq != lastQ || pr != lastR) {
				grows++
			}
			lastQ, lastR = pq, pr
		}
		if grows > 0 {
			t.Errorf("swing %d: tables or ring reallocated in %d of 19 cycles", swing, grows)
		}
	}
	// A burst of a million is released once drained.
	var tb table[int, struct{}]
	var r ring[int]
	const burst = 1 << 20
	for i := range burst {
		tb.put(i, uint64(i), struct{}{})
		r.push(i)
	}
	for i := range burst {
		tb.del(i, uint64(i))
		r.pop()
	}
	if len(tb.slots) > shrinkFrom || len(r.buf) > shrinkRing {
		t.Errorf("drained burst: %d slots, ring of %d", len(tb.slots), len(r.buf))
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func unsafePointer[E any](s []E) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(s)) }

// meanDistance is the mean distance of the entries of t from their homes:
// the probes a lookup makes beyond the first.
func meanDistance[K comparable, V any](t *table[K, V]) float64 {
	sum := 0
	for _, c := range t.slots {
		sum += int(c.ctrl & 0xff)
	}
	return float64(sum) / float64(max(t.n, 1))
}

// TestPlacementNeverWorseThanHashing drives a queue in its steady state (add
// a new key, take and complete the oldest) with each pattern of
// BenchmarkPlacement, and the same with hashed placement from the start: the
// queue's own placement must end with runs no longer than hashing gives
// (the same, once it has switched; none, while by value fits), and must
// settle early: every resize, the switch included, happens while the queue
// fills, none in the steady state after it.
func TestPlacementNeverWorseThanHashing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	noop := func(context.Context, []int) error { return nil }
	for _, queued := range []int{1024, 50_000} {
		for _, p := range placementPatterns {
			dist := map[string]float64{}
			for _, place := range []string{"auto", "hash"} {
				var q Queue[int]
				q.Init(Config{})
				if place == "hash" {
					q.lock()
					q.items.resize(minTable)
					q.items.place = byMix
					q.mu.Unlock()
				}
				i := 0
				for ; i < 2*queued; i++ { // fill, and one round of turnover
					q.Add(p.key(i))
					if i >= queued {
						_ = q.Process(ctx, 1, noop)
					}
				}
				slots := unsafePointer(q.items.slots)
				for ; i < 4*queued; i++ {
					q.Add(p.key(i))
					_ = q.Process(ctx, 1, noop)
				}
				if unsafePointer(q.items.slots) != slots {
					t.Errorf("%d %s %s: the table resized in the steady state", queued, p.name, place)
				}
				dist[place] = meanDistance(&q.items)
			}
			if dist["auto"] > dist["hash"]+0.05 {
				t.Errorf("%d %s: mean distance %.2f by the queue's placement, %.2f hashed", queued, p.name, dist["auto"], dist["hash"])
			}
		}
	}
}
