package distinct

import (
	"hash/maphash"
	"math/bits"
	"math/rand/v2"
)

// table is a hash map with open addressing, linear probing and
// backward-shift deletion. Deleting leaves no tombstone, so looking up an
// absent key stays cheap however much the table churns.
//
// A queue needs that: every add looks up a key that is usually absent, and
// the keys it inserts are new while those it deletes are old. Go's built-in
// maps keep a tombstone for every deletion until they run out of room, so
// under that pattern most lookups of absent keys probe through tombstones;
// profiles of client-go's workqueue and of this queue on built-in maps spent
// half their time there.
//
// A slot holds a two-byte control word next to its key and value, so that a
// lookup in a table larger than the caches costs one cache miss, not one per
// array. Callers hash a key once, with hash, and pass the hash to each table
// they probe. Its methods need the queue's
// write lock (or, for reads, either side of the gate).
type table[K comparable, V any] struct {
	slots []cell[K, V]
	n     int
}

// cell is one slot of a table. val comes first so that a zero-size V adds
// no padding.
type cell[K comparable, V any] struct {
	val  V
	ctrl uint16 // 0 if empty, else tag(hash)<<8 | probe distance
	key  K
}

const (
	minTable = 8
	// A table grows when more than 3/4 of its slots are used. It shrinks,
	// to release the memory of a burst, when fewer than 1/32 of more than
	// shrinkFrom slots are used; the gap keeps a table whose size oscillates
	// from reallocating all the time.
	loadNum, loadDen = 3, 4
	shrinkFrom       = 1024
)

// tag is the high byte of a slot's control word for a key of hash h: never
// zero. The low byte is how far the slot is from the key's home slot, or
// farDistance when it is at least that far, so deleting rarely rehashes.
// seed, mulKey and xorKey key the hashes of every table in the process. They
// are random per process, as the runtime's map seeds are, and shared so that
// an item can be hashed before the queue's lock is taken.
var (
	seed           = maphash.MakeSeed()
	xorKey, mulKey = rand.Uint64(), rand.Uint64() | 1
)

// hash returns the hash of k that the tables use. Integer keys, the common
// case, are mixed directly with a keyed multiply (the construction of
// wyhash, which the runtime's own map hash falls back to without AES);
// maphash.Comparable costs twice as much for them. Every other type goes
// through maphash.Comparable.
func hash[K comparable](k K) uint64 {
	switch v := any(k).(type) {
	case int:
		return mix(uint64(v))
	case int64:
		return mix(uint64(v))
	case uint64:
		return mix(v)
	case uint:
		return mix(uint64(v))
	case int32:
		return mix(uint64(v))
	case uint32:
		return mix(uint64(v))
	}
	return maphash.Comparable(seed, k)
}

// mix folds the 128-bit product of the keyed x and mulKey.
func mix(x uint64) uint64 {
	hi, lo := bits.Mul64(x^xorKey, mulKey)
	return hi ^ lo
}

func tag(h uint64) uint8 { return uint8(h>>57) | 0x80 }

const farDistance = 0xff

func control(h uint64, dist int) uint16 { return uint16(tag(h))<<8 | uint16(min(dist, farDistance)) }

func (t *table[K, V]) len() int { return t.n }

// find returns the slot of k, whose hash is h, and true; or the empty slot
// where k would go and false. The table must have at least one slot.
func (t *table[K, V]) find(k K, h uint64) (int, bool) {
	mask := len(t.slots) - 1
	want := tag(h)
	for i := int(h) & mask; ; i = (i + 1) & mask {
		switch s := &t.slots[i]; {
		case s.ctrl == 0:
			return i, false
		case uint8(s.ctrl>>8) == want && s.key == k:
			return i, true
		}
	}
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

// reserve makes room for n more entries, so that the empty slot find
// returns stays valid for insertAt.
func (t *table[K, V]) reserve(n int) {
	if (t.n+n)*loadDen > len(t.slots)*loadNum {
		size := max(len(t.slots), minTable)
		for (t.n+n)*loadDen > size*loadNum {
			size *= 2
		}
		t.resize(size)
	}
}

// insertAt puts k (hash h), which is absent, with value v in the empty slot
// i that find returned after reserve.
func (t *table[K, V]) insertAt(i int, k K, h uint64, v V) {
	t.slots[i] = cell[K, V]{val: v, ctrl: control(h, (i-int(h))&(len(t.slots)-1)), key: k}
	t.n++
}

// put sets the value of k (hash h) and returns a pointer to it, valid until
// the table next changes.
func (t *table[K, V]) put(k K, h uint64, v V) *V {
	t.reserve(1)
	i, ok := t.find(k, h)
	if !ok {
		t.insertAt(i, k, h, v)
	}
	t.slots[i].val = v
	return &t.slots[i].val
}

// at returns a pointer to the value in slot i, which find reported present.
func (t *table[K, V]) at(i int) *V { return &t.slots[i].val }

// del removes k (hash h) and returns its value and whether it was present.
// The entries after it in its probe run move back to fill the gap, so no
// tombstone is left.
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
	mask := len(t.slots) - 1
	for j := i; ; {
		j = (j + 1) & mask
		c := t.slots[j].ctrl
		if c == 0 {
			break
		}
		// The entry at j may move back to i unless its home slot lies
		// cyclically in (i, j]: then i is before its home.
		dist := int(c & farDistance)
		if dist == farDistance {
			dist = (j - int(hash(t.slots[j].key))) & mask
		}
		gap := (j - i) & mask
		if dist < gap {
			continue
		}
		t.slots[i] = t.slots[j]
		t.slots[i].ctrl = c&^farDistance | uint16(min(dist-gap, farDistance))
		i = j
	}
	t.slots[i] = cell[K, V]{}
	t.n--
	if n := len(t.slots); n > shrinkFrom && t.n*32 < n {
		t.resize(max(minTable, n/8))
	}
	return v, true
}

// resize rehashes the entries into a table of n slots, a power of two.
func (t *table[K, V]) resize(n int) {
	old := t.slots
	t.slots = make([]cell[K, V], n)
	mask := n - 1
	for _, s := range old {
		if s.ctrl == 0 {
			continue
		}
		h := hash(s.key)
		j := int(h) & mask
		for t.slots[j].ctrl != 0 {
			j = (j + 1) & mask
		}
		s.ctrl = control(h, (j-int(h))&mask)
		t.slots[j] = s
	}
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
