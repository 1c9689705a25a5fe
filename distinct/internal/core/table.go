package core

import (
	"math/bits"
	"math/rand/v2"

	"github.com/jobkit/jobkit/internal/keys"
)

// table is a hash map with open addressing and Robin Hood linear probing:
// the entries of a probe run are kept in the order of their home slots, so a
// lookup stops as soon as it passes the place its key would have, and a
// deletion shifts the rest of the run back one slot and leaves no tombstone.
// Looking up an absent key stays cheap however much the table churns.
//
// A queue needs that: every add looks up a key that is usually absent, and
// the keys it inserts are new while those it deletes are old. Go's built-in
// maps keep a tombstone for every deletion until they run out of room, so
// under that pattern most lookups of absent keys probe through tombstones;
// profiles of client-go's workqueue and of this queue on built-in maps spent
// half their time there.
//
// Placement. Integer keys (of any integer type, named or not) are placed by
// their own value at first: key k goes
// to slot k mod size. Keys that arrive in order (job IDs from a sequence, the
// common case) then fill the table in order, so adding at the tail and taking
// at the head touch memory sequentially, as a ring buffer does, and a queue
// far larger than the CPU caches runs at cache speed; with a scrambling hash
// every such access would be a cache miss (BenchmarkQueue_KeyPattern: about
// 4× slower at a million items). Keys that cluster under that placement
// (multiples of a power of two, say, or old keys held while new ones wrap
// around onto them) make runs long. An entry further than orderedLimit from
// home, or a run of more than orderedLimit consecutive entries off their
// homes (which one deletion would move back, one by one), makes the table
// grow, up to maxSpread times the size its entries need, and then switch for
// good to placement by a keyed hash (mix), cheaper than maphash for
// integers. So does a mean distance above orderedMeanLimit after a rehash.
// Other key types, interfaces holding integers included, are placed by their
// hash (keys.HashWith: a struct's bytes and strings for plain types,
// maphash.Comparable for the others). A lookup so never probes more than
// maxDistance slots, and under placement by value neither a lookup nor an
// insert nor a deletion touches more than about orderedLimit; a key pattern
// costs a few rehashes at most before the switch. BenchmarkPlacement and
// TestPlacementNeverWorseThanHashing check, for nine patterns (producer
// ranges among them), that the result is never worse than hashing from the
// start, and that the switch happens while the queue fills.
//
// A slot holds a two-byte control word next to its key and value, so that a
// lookup in a table larger than the caches costs one cache miss, not one per
// array. Callers hash a key once, with Queue.hash, and pass the hash to each
// table they probe. Its methods need the queue's write lock (or, for reads, either
// side of the gate).
type table[K comparable, V any] struct {
	slots []cell[K, V]
	n     int
	// dels counts deletions since the last resize: a table shrinks only
	// after size/shrinkAfter of them, so that a queue whose length swings
	// between empty and a few thousand does not reallocate its table on
	// every swing, and a shrink and the regrowth after it cost O(1) per
	// operation, amortized.
	dels  int
	lay   *keys.Layout // of K, found at the first resize
	place placement
}

// placement says how a table finds an entry's home slot.
type placement uint8

const (
	unplaced placement = iota // no slots yet
	byHash                    // the hash: maphash.Comparable, for non-integers
	byValue                   // the hash: an integer key's value
	byMix                     // mix(the hash): integer keys that clustered
)

// cell is one slot of a table. val comes first so that a zero-size V adds
// no padding.
type cell[K comparable, V any] struct {
	val  V
	ctrl uint16 // 0 if empty, else tag<<8 | distance from the home slot
	key  K
}

const (
	minTable = 8
	// A table grows when more than 3/4 of its slots are used. It shrinks,
	// to release the memory of a burst, when fewer than 1/32 of more than
	// shrinkFrom slots are used and it has seen size/shrinkAfter deletions
	// since it last changed size; the gaps keep a table whose size
	// oscillates from reallocating all the time.
	loadNum, loadDen = 3, 4
	shrinkFrom       = 1 << 13
	shrinkAfter      = 8
	// maxDistance is the furthest an entry may be from its home slot (it
	// fits the control word's low byte); past it the table grows, which
	// with random homes at 3/4 load practically never happens.
	maxDistance = 254
	// Under placement by value, an entry may be at most orderedLimit slots
	// from home, at most orderedLimit entries in a row may be off home, and
	// after a rehash the mean distance may be at most orderedMeanLimit
	// (random homes give below 2). Past that the table grows while it is at
	// most maxSpread times the size its entries need: keys in order but
	// spread wider than the table (several sequences interleaved, running
	// at different speeds) wrap around onto each other, and a wider table
	// keeps them apart. Then the keys are mixed.
	orderedLimit     = 64
	orderedMeanLimit = 3
	maxSpread        = 2
)

// xorKey, xorKey2 and mulKey key the mix of integer keys in every table of
// the process (keys.Seed keys the hashes of the others). They are random
// per process, as the runtime's map seeds are.
var xorKey, xorKey2, mulKey = rand.Uint64(), rand.Uint64(), rand.Uint64() | 1

// mix hashes an integer key: two rounds of a keyed 64×64→128-bit multiply,
// folded (the construction of wyhash, which the runtime's own map hash falls
// back to without AES). One round leaves the low bits of the hash of keys
// such as i<<32 close to linear in i, and those are the keys that get mixed.
func mix(x uint64) uint64 { return mixWith(x, xorKey, xorKey2, mulKey) }

func mixWith(x, xor1, xor2, mul uint64) uint64 {
	hi, lo := bits.Mul64(x^xor1, mul)
	hi, lo = bits.Mul64(hi^lo^xor2, mul)
	return hi ^ lo
}

// home returns where the key of hash h is placed, before taking the mask.
func (t *table[K, V]) home(h uint64) uint64 {
	if t.place == byMix {
		return mix(h)
	}
	return h
}

// tag is the high byte of a slot's control word for a key placed at p: never
// zero, and for hashed homes a filter that spares most key comparisons.
func tag(p uint64) uint16 { return uint16(p>>57|0x80) << 8 }

func (t *table[K, V]) len() int { return t.n }

// find returns the slot of k, whose hash is h, and true; or the slot where k
// would be inserted and false. The table must have at least one slot.
func (t *table[K, V]) find(k K, h uint64) (int, bool) {
	p := t.home(h)
	mask := len(t.slots) - 1
	want := tag(p)
	for d, i := 0, int(p)&mask; ; d, i = d+1, (i+1)&mask {
		s := &t.slots[i]
		// An empty slot has distance 0, so it ends the run here too: the
		// entries of a run are in order of their home slots, and one
		// closer to its home than d was placed after k's.
		if int(s.ctrl&0xff) < d || s.ctrl == 0 {
			return i, false
		}
		if s.ctrl&0xff00 == want && s.key == k {
			return i, true
		}
	}
}

// mustFind returns the slot of k, whose hash is h, which is in the table.
func (t *table[K, V]) mustFind(k K, h uint64) int {
	i, _ := t.find(k, h)
	return i
}

// lookup returns the slot of k (hash h) and true, or false if k is absent.
func (t *table[K, V]) lookup(k K, h uint64) (int, bool) {
	if t.n == 0 {
		return 0, false
	}
	return t.find(k, h)
}

// get returns a pointer to the value of k (hash h), valid until the table
// next changes, or nil if k is absent.
func (t *table[K, V]) get(k K, h uint64) *V {
	if t.n == 0 {
		return nil
	}
	if i, ok := t.find(k, h); ok {
		return &t.slots[i].val
	}
	return nil
}

// reserve makes room for n more entries, so that the slot find returns stays
// valid for insertAt.
func (t *table[K, V]) reserve(n int) {
	if (t.n+n)*loadDen > len(t.slots)*loadNum {
		size := max(len(t.slots), minTable)
		for (t.n+n)*loadDen > size*loadNum {
			size *= 2
		}
		t.resize(size)
	}
}

// insertAt puts k (hash h), which is absent, with value v at slot i, which
// find returned after reserve, moving the rest of the run one slot on. It
// returns the slot k is in: i, unless the table had to be rehashed.
func (t *table[K, V]) insertAt(i int, k K, h uint64, v V) int {
	mask := len(t.slots) - 1
	p := t.home(h)
	if t.shift(i, cell[K, V]{val: v, ctrl: tag(p) | uint16((i-int(p))&mask), key: k}, t.place == byValue) {
		return i
	}
	t.rehash(t.overflow(len(t.slots), t.n)) // past a limit
	i, _ = t.find(k, h)
	return t.insertAt(i, k, h, v)
}

// shift puts c at slot i and moves the entries from there up to the next
// empty slot one slot on. It reports false, changing nothing, if an entry
// would then be further than maxDistance from home, or, if ordered, further
// than orderedLimit or in a run of more than orderedLimit entries off their
// homes.
func (t *table[K, V]) shift(i int, c cell[K, V], ordered bool) bool {
	mask, limit := len(t.slots)-1, distanceLimit(ordered)
	d := int(c.ctrl & 0xff)
	if d > limit {
		return false
	}
	moved := 0
	for j := i; t.slots[j].ctrl != 0; j = (j + 1) & mask {
		if int(t.slots[j].ctrl&0xff) >= limit {
			return false
		}
		moved++
	}
	if ordered {
		// The moved entries end up off home, and so does c if d > 0,
		// joining the entries off home before slot i.
		run := moved
		if d > 0 {
			run++
			for j := (i - 1) & mask; run <= limit && t.slots[j].ctrl&0xff != 0; j = (j - 1) & mask {
				run++
			}
		}
		if run > limit {
			return false
		}
	}
	for {
		s := &t.slots[i]
		if s.ctrl == 0 {
			*s = c
			t.n++
			return true
		}
		c, *s = *s, c
		c.ctrl++ // one slot further from home
		i = (i + 1) & mask
	}
}

// distanceLimit is the furthest an entry may be from its home slot, under
// placement by value (ordered) or otherwise.
func distanceLimit(ordered bool) int {
	if ordered {
		return orderedLimit
	}
	return maxDistance
}

// put sets the value of k (hash h) and returns a pointer to it, valid until
// the table next changes.
func (t *table[K, V]) put(k K, h uint64, v V) *V {
	t.reserve(1)
	i, ok := t.find(k, h)
	if !ok {
		i = t.insertAt(i, k, h, v)
	}
	t.slots[i].val = v
	return &t.slots[i].val
}

// at returns a pointer to the value in slot i, which find reported present.
func (t *table[K, V]) at(i int) *V { return &t.slots[i].val }

// del removes k (hash h) and returns its value and whether it was present.
// The entries after it in its run move back one slot, so no tombstone is
// left.
func (t *table[K, V]) del(k K, h uint64) (V, bool) {
	var v V
	if t.n == 0 {
		return v, false
	}
	i, ok := t.find(k, h)
	if !ok {
		return v, false
	}
	v = t.slots[i].val
	t.delAt(i)
	return v, true
}

// delAt removes the entry in slot i, which find reported present.
func (t *table[K, V]) delAt(i int) {
	mask := len(t.slots) - 1
	for {
		j := (i + 1) & mask
		s := &t.slots[j]
		if s.ctrl&0xff == 0 { // empty, or at its home: the run ends
			break
		}
		t.slots[i] = *s
		t.slots[i].ctrl--
		i = j
	}
	t.slots[i] = cell[K, V]{}
	t.n--
	t.dels++
	if n := len(t.slots); n > shrinkFrom && t.n*32 < n && t.dels*shrinkAfter >= n {
		t.resize(max(minTable, n/8))
	}
}

// resize rehashes the entries into a table of n slots, a power of two.
func (t *table[K, V]) resize(n int) {
	if t.place == unplaced {
		t.lay = keys.LayoutOf[K]()
		t.place = byHash
		if t.lay.Kind.Integer() {
			t.place = byValue
		}
	}
	t.rehash(n)
}

// rehash moves the entries into a table of n slots, a power of two, or a
// larger one if the entries would lie past the limits, switching placement as
// overflow says.
func (t *table[K, V]) rehash(n int) {
	old, count := t.slots, t.n
	t.dels = 0
	for {
		t.slots, t.n = make([]cell[K, V], n), 0
		if t.fill(old) && t.fits(count) {
			return
		}
		n = t.overflow(n, count)
	}
}

// overflow returns the size to rehash to when the entries would lie past the
// limits in a table of n slots holding count entries, or the insert of one
// more would break them. It switches from placement by value to mixed
// placement, at the size count+1 entries need, when growing is no longer
// the answer (see maxSpread).
func (t *table[K, V]) overflow(n, count int) int {
	if t.place == byValue && n >= maxSpread*needed(count+1) {
		t.place = byMix
		return needed(count + 1)
	}
	return 2 * n
}

// needed returns the size of a table for n entries.
func needed(n int) int {
	size := minTable
	for n*loadDen > size*loadNum {
		size *= 2
	}
	return size
}

// fill inserts the entries of old into t's empty slots. It reports false if
// one would lie further than maxDistance from home; the limits of placement
// by value are judged afterwards, on the whole layout, by fits, since
// halfway through a fill the runs depend on the order of the inserts.
func (t *table[K, V]) fill(old []cell[K, V]) bool {
	mask := len(t.slots) - 1
	for _, s := range old {
		if s.ctrl == 0 {
			continue
		}
		h, _ := keys.HashWith(t.lay, s.key) // a key in a table is valid
		p := t.home(h)
		i, d := int(p)&mask, 0
		for t.slots[i].ctrl != 0 && int(t.slots[i].ctrl&0xff) >= d {
			i, d = (i+1)&mask, d+1
		}
		s.ctrl = tag(p) | uint16(min(d, maxDistance+1))
		if !t.shift(i, s, false) {
			return false
		}
	}
	return true
}

// fits reports whether the layout of count entries keeps the limits of
// placement by value: no entry further than orderedLimit from home, no run
// of more than orderedLimit entries off their homes, and a mean distance of
// at most orderedMeanLimit. Other placements always fit.
func (t *table[K, V]) fits(count int) bool {
	if t.place != byValue || count == 0 {
		return true
	}
	mask := len(t.slots) - 1
	start := 0
	for t.slots[start].ctrl != 0 { // a run may wrap around: start at a gap
		start++
	}
	sum, run := 0, 0
	for k := range len(t.slots) {
		d := int(t.slots[(start+k)&mask].ctrl & 0xff)
		if d == 0 {
			run = 0
			continue
		}
		if run++; d > orderedLimit || run > orderedLimit {
			return false
		}
		sum += d
	}
	return sum <= orderedMeanLimit*count
}

// all calls yield for each entry, in no particular order, until it returns
// false.
func (t *table[K, V]) all(yield func(K, *V) bool) {
	for i := range t.slots {
		if s := &t.slots[i]; s.ctrl != 0 && !yield(s.key, &s.val) {
			return
		}
	}
}
