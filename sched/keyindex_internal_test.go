package sched

import (
	"strconv"
	"testing"

	"pgregory.net/rapid"
)

func newTestIndex[K comparable]() *keyIndex[int, K] {
	x := newKeyIndex[int, K]()
	return &x
}

// lookupOrInsert is what Memory.add does with the index: the entry of k,
// or a new one inserted.
func (x *keyIndex[T, K]) lookupOrInsert(t *rapid.T, k K) (e *mentry[T, K], inserted bool) {
	h, ok := x.hash(k)
	if !ok {
		t.Fatalf("key %v refused", k)
	}
	old, slot := x.lookup(k, h)
	if old != nil {
		return old, false
	}
	e = &mentry[T, K]{key: k}
	x.insert(slot, h, e)
	return e, true
}

// checkKeyIndex compares x with the model: the same keys, each found
// where a probe from its home reaches it without crossing an empty slot.
func checkKeyIndex[K comparable](t *rapid.T, x *keyIndex[int, K], model map[K]*mentry[int, K]) {
	if x.n != len(model) {
		t.Fatalf("%d keys in the index, %d in the model", x.n, len(model))
	}
	for k, want := range model {
		h, _ := x.hash(k)
		if got, _ := x.find(k, h); got != want {
			t.Fatalf("key %v: found %p, want %p", k, got, want)
		}
	}
	if x.n*4 > len(x.slots)*3 {
		t.Fatalf("%d keys in %d slots: more than 3/4 full", x.n, len(x.slots))
	}
}

// keyIndexMachine runs random adds (lookup or insert) and removes against
// a Go map, with keys from a small range so that they collide and runs
// form, and bursts that make the table grow and shrink.
func keyIndexMachine[K comparable](t *rapid.T, key func(int) K) {
	x := newTestIndex[K]()
	model := map[K]*mentry[int, K]{}
	var present []K // the model's keys, for picking one
	span := rapid.IntRange(1, 2000).Draw(t, "span")
	add := func(t *rapid.T, k K) {
		e, inserted := x.lookupOrInsert(t, k)
		if want, ok := model[k]; ok == inserted || (ok && want != e) {
			t.Fatalf("add %v: inserted %v, model has it %v", k, inserted, ok)
		}
		if inserted {
			model[k] = e
			present = append(present, k)
		}
	}
	t.Repeat(map[string]func(*rapid.T){
		"add": func(t *rapid.T) { add(t, key(rapid.IntRange(0, span).Draw(t, "k"))) },
		"burst": func(t *rapid.T) {
			base := rapid.IntRange(0, 1<<20).Draw(t, "base")
			stride := rapid.IntRange(1, 1024).Draw(t, "stride")
			for i := range rapid.IntRange(1, 1200).Draw(t, "n") {
				add(t, key(base+i*stride))
			}
		},
		"remove": func(t *rapid.T) {
			if len(present) == 0 {
				t.Skip("empty")
			}
			n := rapid.IntRange(1, len(present)).Draw(t, "n")
			seed := rapid.Uint64().Draw(t, "seed")
			for range n {
				seed = seed*6364136223846793005 + 1442695040888963407
				i := int((seed >> 33) % uint64(len(present)))
				k := present[i]
				present[i] = present[len(present)-1]
				present = present[:len(present)-1]
				x.remove(model[k])
				delete(model, k)
			}
		},
		"": func(t *rapid.T) { checkKeyIndex(t, x, model) },
	})
}

func TestKeyIndexMatchesAMap(t *testing.T) {
	t.Run("int", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) { keyIndexMachine(t, func(i int) int { return i }) })
	})
	t.Run("string", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) { keyIndexMachine(t, func(i int) string { return "ns/name-" + strconv.Itoa(i) }) })
	})
}

// Removing an entry that is not in the index (deleted twice) changes
// nothing and returns.
func TestKeyIndexRemoveOfAnAbsentEntry(t *testing.T) {
	x := newTestIndex[int]()
	stranger := &mentry[int, int]{key: 7}
	x.remove(stranger) // empty index
	e := &mentry[int, int]{key: 7}
	h, _ := x.hash(7)
	_, slot := x.lookup(7, h)
	x.insert(slot, h, e)
	stranger.khash = h // same key and hash, another entry
	x.remove(stranger)
	if got, _ := x.find(7, h); got != e || x.n != 1 {
		t.Errorf("after removing an absent entry: found %p with %d keys, want %p with 1", got, x.n, e)
	}
	x.remove(e)
	x.remove(e)
	if x.n != 0 {
		t.Errorf("%d keys after removing the only one twice", x.n)
	}
}

// Integer keys crafted so that a fixed multiplicative hash sends them all
// to one slot (i × the multiplier's inverse: their products are i) spread
// like any keys: no probe is long.
//
// The index's seed is fixed, to a few random-looking values: an integer key
// is its own hash, so the seed alone makes the layout random, and with a
// random seed a rare table of these (load 0.61) has a probe a little over
// 100 long by chance, as any keys might (a loaded test run saw 102). Each
// seed here gives the same layout on every run. (A seed of 1, which does not
// mix, gives probes of 372.)
func TestKeyIndexSpreadsCraftedKeys(t *testing.T) {
	const mul = 0x9e3779b97f4a7c15
	inv := uint64(mul) // Newton's iteration for the inverse mod 2^64
	for range 6 {
		inv *= 2 - mul*inv
	}
	if uint64(mul)*inv != 1 {
		t.Fatal("no inverse")
	}
	for _, seed := range []uint64{0x8bb84b93962eacc9, 0x2545f4914f6cdd1d, 0x9e3779b97f4a7c15, 0xd1b54a32d192ed03} {
		x := newTestIndex[uint64]()
		x.seed = seed | 1
		const n = 20_000
		for i := range uint64(n) {
			k := (i + 1) * inv
			h, _ := x.hash(k)
			old, slot := x.lookup(k, h)
			if old != nil {
				t.Fatal("duplicate")
			}
			x.insert(slot, h, &mentry[int, uint64]{key: k})
		}
		mask := len(x.slots) - 1
		longest, total := 0, 0
		for i, s := range x.slots {
			if s.e != nil {
				d := (i - x.home(s.h)) & mask
				longest, total = max(longest, d), total+d
			}
		}
		t.Logf("seed %#x: longest probe %d, %.2f on average", x.seed, longest, float64(total)/n)
		if longest > 100 || total > 3*n {
			t.Errorf("seed %#x: probes of %d crafted keys: longest %d, %.1f on average", x.seed, n, longest, float64(total)/n)
		}
	}
}

// A queue whose depth swings between empty and about 1,100 keys keeps its
// table: after the first swing, swings allocate nothing.
func TestKeyIndexKeepsItsTableUnderASwingingLoad(t *testing.T) {
	x := newTestIndex[int]()
	es := make([]*mentry[int, int], 1100)
	for i := range es {
		es[i] = new(mentry[int, int])
	}
	next := 0
	swing := func() {
		for _, e := range es {
			e.key = next
			next++
			h, _ := x.hash(e.key)
			old, slot := x.lookup(e.key, h)
			if old != nil {
				t.Fatal("duplicate")
			}
			x.insert(slot, h, e)
		}
		for _, e := range es {
			x.remove(e)
		}
	}
	swing()
	if a := testing.AllocsPerRun(20, swing); a != 0 {
		t.Errorf("%v allocations a swing, want 0", a)
	}
}

// An index that held a burst gives its room back once it has stayed nearly
// empty for as many removals as it has slots, and not before.
func TestKeyIndexReleasesABurst(t *testing.T) {
	x := newTestIndex[int]()
	add := func(k int) *mentry[int, int] {
		e := &mentry[int, int]{key: k}
		h, _ := x.hash(k)
		_, slot := x.lookup(k, h)
		x.insert(slot, h, e)
		return e
	}
	var live []*mentry[int, int]
	for k := range 100_000 {
		live = append(live, add(k))
	}
	for _, e := range live[10:] {
		x.remove(e)
	}
	live = live[:10]
	big := len(x.slots)
	// Steady churn of 10 live keys: one add and one removal a job.
	k := 100_000
	for removals := 100_000 - 10; len(x.slots) == big; removals++ {
		if removals > 2*big {
			t.Fatalf("still %d slots for 10 keys after %d removals", len(x.slots), removals)
		}
		x.remove(live[0])
		live = append(live[1:], add(k))
		k++
		if len(x.slots) != big && removals < big {
			t.Fatalf("shrunk after %d removals, before the %d its %d slots call for", removals, big, big)
		}
	}
	if len(x.slots) > 64 {
		t.Errorf("%d slots for %d keys after the shrink", len(x.slots), x.n)
	}
	for _, e := range live {
		h, _ := x.hash(e.key)
		if got, _ := x.find(e.key, h); got != e {
			t.Errorf("key %d lost in the shrink", e.key)
		}
	}
}

// BenchmarkKeyIndex is the index's work for one job of a queue about
// 1,024 jobs deep (lookup and insert of a new key, delete of the oldest)
// against a Go map doing the same, for string keys "ns/name-i", integer
// IDs from four producers that each own a range, and integer IDs in order.
func BenchmarkKeyIndex(b *testing.B) {
	const live = 1024
	b.Run("keys=string", func(b *testing.B) {
		ks := make([]string, 1<<16)
		for i := range ks {
			ks[i] = "ns/name-" + strconv.Itoa(i)
		}
		benchKeyIndex(b, live, func(i int) string { return ks[i%len(ks)] })
	})
	b.Run("keys=ranges", func(b *testing.B) { benchKeyIndex(b, live, func(i int) int { return i%4<<40 + i/4 }) })
	b.Run("keys=int", func(b *testing.B) { benchKeyIndex(b, live, func(i int) int { return i }) })
}

func benchKeyIndex[K comparable](b *testing.B, live int, key func(int) K) {
	ring := make([]*mentry[int, K], live) // the live entries, reused
	for i := range ring {
		ring[i] = new(mentry[int, K])
	}
	b.Run("impl=keyIndex", func(b *testing.B) {
		x := newTestIndex[K]()
		add := func(i int) {
			k := key(i)
			h, _ := x.hash(k)
			old, slot := x.lookup(k, h)
			if old != nil {
				b.Fatal("duplicate")
			}
			e := ring[i%live]
			e.key = k
			x.insert(slot, h, e)
		}
		for i := range live {
			add(i)
		}
		b.ResetTimer()
		for i := live; i < live+b.N; i++ {
			x.remove(ring[i%live])
			add(i)
		}
	})
	b.Run("impl=map", func(b *testing.B) {
		m := map[K]*mentry[int, K]{}
		add := func(i int) {
			k := key(i)
			if _, dup := m[k]; dup {
				b.Fatal("duplicate")
			}
			e := ring[i%live]
			e.key = k
			m[k] = e
		}
		for i := range live {
			add(i)
		}
		b.ResetTimer()
		for i := live; i < live+b.N; i++ {
			delete(m, ring[i%live].key)
			add(i)
		}
	})
}
