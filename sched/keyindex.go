package sched

import (
	"math/bits"
	"math/rand/v2"

	"github.com/jobkit/jobkit/internal/keys"
)

// keyIndex maps the keys of a Memory's keyed entries to the entries: an
// open-addressing table with linear probing and backward-shift deletion,
// each slot the hash of its key and the entry, which holds the key. It
// replaces a Go map because every job looks a key up and inserts it, then
// deletes it: here the lookup and the insert share one hash and one probe,
// the delete needs no hash at all (the entry keeps its key's), and the
// FIFO churn of keys leaves no tombstones. BenchmarkKeyIndex compares the
// two.
//
// Keys are hashed with keys.HashWith, so that keys that are not equal to
// themselves (NaN) or cannot be hashed are refused instead of stored where
// they could never be found again, or panicking. Integer keys are their own
// hash, so every hash is mixed with a seed random per index before it
// places a key: sequential and strided IDs spread, and keys chosen to
// collide under a fixed multiplier (i × its inverse) spread too
// (TestKeyIndexSpreadsCraftedKeys).
//
// The table doubles at 3/4 full. It shrinks, to 1/4 full, only once it has
// stayed under 1/16 full for as many removals as it has slots: a queue
// whose depth swings between empty and full keeps its table (resizing on
// every swing would allocate all the time), and one that held a burst gives
// the room back once the burst is long past, which a Go map never does.
// Adds and removes cost O(1) amortised.
type keyIndex[T any, K comparable] struct {
	lay   *keys.Layout
	slots []kslot[T, K] // a power of two long, or nil
	seed  uint64
	n     int
	shift uint // 64 − log2(len(slots))
	low   int  // removals since the table was last 1/16 full or more
}

// kslot is a slot of a keyIndex; e is nil in an empty one.
type kslot[T any, K comparable] struct {
	h uint64
	e *mentry[T, K]
}

// minKeySlots is the smallest table a keyIndex keeps once it has one.
const minKeySlots = 16

// hash returns the hash of k, or false if k cannot be a key. It reads
// only the layout, set when the index is made, so it needs no lock.
func (x *keyIndex[T, K]) hash(k K) (uint64, bool) {
	return keys.HashWith(x.lay, k)
}

// newKeyIndex returns an empty index with a random seed.
func newKeyIndex[T any, K comparable]() keyIndex[T, K] {
	return keyIndex[T, K]{lay: keys.LayoutOf[K](), seed: rand.Uint64() | 1}
}

// home is the slot where a key of hash h starts its probe: the top bits
// of the 128-bit product of h and the seed, folded.
func (x *keyIndex[T, K]) home(h uint64) int {
	hi, lo := bits.Mul64(h^x.seed, 0x9e3779b97f4a7c15)
	return int((hi ^ lo) >> x.shift)
}

// find returns the entry with key k of hash h, and its slot; or nil and
// the empty slot where k would go. The table must have a slot.
func (x *keyIndex[T, K]) find(k K, h uint64) (*mentry[T, K], int) {
	mask := len(x.slots) - 1
	for i := x.home(h); ; i = (i + 1) & mask {
		s := &x.slots[i]
		if s.e == nil {
			return nil, i
		}
		if s.h == h && s.e.key == k {
			return s.e, i
		}
	}
}

// lookup returns the entry with key k of hash h, or nil and the slot where
// insert puts k. A miss makes room first, so that the slot stays valid for
// the insert that follows (nothing may change the index in between); a hit
// changes nothing.
func (x *keyIndex[T, K]) lookup(k K, h uint64) (*mentry[T, K], int) {
	if len(x.slots) > 0 {
		e, i := x.find(k, h)
		if e != nil || (x.n+1)*4 <= len(x.slots)*3 {
			return e, i
		}
	}
	x.resize(max(minKeySlots, 2*len(x.slots)))
	return x.find(k, h)
}

// insert stores e, whose key has hash h and is not in the index, in the
// empty slot i that lookup returned, and marks it keyed.
func (x *keyIndex[T, K]) insert(i int, h uint64, e *mentry[T, K]) {
	x.slots[i] = kslot[T, K]{h: h, e: e}
	e.khash, e.keyed = h, true
	x.n++
	if x.n*16 >= len(x.slots) {
		x.low = 0
	}
}

// remove deletes e, if it is keyed, and marks it not keyed, moving back
// the keys after it in its run that may take its place.
func (x *keyIndex[T, K]) remove(e *mentry[T, K]) {
	if !e.keyed {
		return
	}
	e.keyed = false
	mask := len(x.slots) - 1
	i := x.home(e.khash)
	for x.slots[i].e != e {
		i = (i + 1) & mask
	}
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		s := x.slots[j]
		if s.e == nil {
			break
		}
		// s may move to i unless its home lies after i, up to j.
		if (j-x.home(s.h))&mask >= (j-i)&mask {
			x.slots[i] = s
			i = j
		}
	}
	x.slots[i] = kslot[T, K]{}
	x.n--
	if n := len(x.slots); x.n*16 < n && n > minKeySlots {
		if x.low++; x.low >= n {
			x.resize(max(minKeySlots, 1<<bits.Len(uint(x.n*4))))
		}
	}
}

// resize moves the keys to a table of n slots, a power of two.
func (x *keyIndex[T, K]) resize(n int) {
	old := x.slots
	x.low = 0
	x.slots = make([]kslot[T, K], n)
	x.shift = uint(64 - bits.TrailingZeros(uint(n)))
	mask := n - 1
	for _, s := range old {
		if s.e == nil {
			continue
		}
		i := x.home(s.h)
		for x.slots[i].e != nil {
			i = (i + 1) & mask
		}
		x.slots[i] = s
	}
}
