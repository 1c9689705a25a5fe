package distinct

import "hash/maphash"

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
// Each slot costs a two-byte control word plus the key and value. Callers hash a key
// once with the seed all of a queue's tables share, and pass the hash to each
// table they probe. Its methods need the queue's write lock (or, for reads,
// either side of the gate).
type table[K comparable, V any] struct {
	seed *maphash.Seed // shared by the queue's tables
	ctrl []uint16      // per slot: 0 if empty, else tag(hash)<<8 | probe distance
	keys []K
	vals []V
	n    int
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
func tag(h uint64) uint8 { return uint8(h>>57) | 0x80 }

const farDistance = 0xff

func control(h uint64, dist int) uint16 { return uint16(tag(h))<<8 | uint16(min(dist, farDistance)) }

func (t *table[K, V]) len() int { return t.n }

// find returns the slot of k, whose hash is h, and true; or the empty slot
// where k would go and false. The table must have at least one slot.
func (t *table[K, V]) find(k K, h uint64) (int, bool) {
	mask := len(t.ctrl) - 1
	want := tag(h)
	for i := int(h) & mask; ; i = (i + 1) & mask {
		switch c := t.ctrl[i]; {
		case c == 0:
			return i, false
		case uint8(c>>8) == want && t.keys[i] == k:
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
		return &t.vals[i]
	}
	return nil
}

// has reports whether k (hash h) is present.
func (t *table[K, V]) has(k K, h uint64) bool {
	if t.n == 0 {
		return false
	}
	_, ok := t.find(k, h)
	return ok
}

// reserve makes room for n more entries, so that the empty slot find
// returns stays valid for insertAt.
func (t *table[K, V]) reserve(n int) {
	if (t.n+n)*loadDen > len(t.ctrl)*loadNum {
		size := max(len(t.ctrl), minTable)
		for (t.n+n)*loadDen > size*loadNum {
			size *= 2
		}
		t.resize(size)
	}
}

// insertAt puts k (hash h), which is absent, with value v in the empty slot
// i that find returned after reserve.
func (t *table[K, V]) insertAt(i int, k K, h uint64, v V) {
	mask := len(t.ctrl) - 1
	t.ctrl[i], t.keys[i], t.vals[i] = control(h, (i-int(h))&mask), k, v
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
	t.vals[i] = v
	return &t.vals[i]
}

// del removes k (hash h) and reports whether it was present. The entries
// after it in its probe run move back to fill the gap, so no tombstone is
// left.
func (t *table[K, V]) del(k K, h uint64) bool {
	if t.n == 0 {
		return false
	}
	i, ok := t.find(k, h)
	if !ok {
		return false
	}
	mask := len(t.ctrl) - 1
	for j := i; ; {
		j = (j + 1) & mask
		if t.ctrl[j] == 0 {
			break
		}
		// The entry at j may move back to i unless its home slot lies
		// cyclically in (i, j]: then i is before its home.
		c := t.ctrl[j]
		dist := int(c & farDistance)
		if dist == farDistance {
			dist = (j - int(maphash.Comparable(*t.seed, t.keys[j]))) & mask
		}
		if gap := (j - i) & mask; dist < gap {
			continue
		} else {
			c = c&^farDistance | uint16(min(dist-gap, farDistance))
		}
		t.ctrl[i], t.keys[i], t.vals[i] = c, t.keys[j], t.vals[j]
		i = j
	}
	var zk K
	var zv V
	t.ctrl[i], t.keys[i], t.vals[i] = 0, zk, zv
	t.n--
	if n := len(t.ctrl); n > shrinkFrom && t.n*32 < n {
		t.resize(max(minTable, n/8))
	}
	return true
}

// resize rehashes the entries into a table of n slots, a power of two.
func (t *table[K, V]) resize(n int) {
	ctrl, keys, vals := t.ctrl, t.keys, t.vals
	t.ctrl, t.keys, t.vals = make([]uint16, n), make([]K, n), make([]V, n)
	mask := n - 1
	for i, c := range ctrl {
		if c == 0 {
			continue
		}
		h := maphash.Comparable(*t.seed, keys[i])
		j := int(h) & mask
		for t.ctrl[j] != 0 {
			j = (j + 1) & mask
		}
		t.ctrl[j], t.keys[j], t.vals[j] = control(h, (j-int(h))&mask), keys[i], vals[i]
	}
}

// all calls yield for each entry, in no particular order, until it returns
// false.
func (t *table[K, V]) all(yield func(K, *V) bool) {
	for i, c := range t.ctrl {
		if c != 0 && !yield(t.keys[i], &t.vals[i]) {
			return
		}
	}
}
