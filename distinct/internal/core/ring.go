package core

import "sort"

// ring is a growable FIFO ring buffer addressed by absolute positions: the
// n-th item ever pushed since the last reset has position base+n, and keeps it
// for as long as it stays in the ring. Positions double as the queue order.
type ring[T any] struct {
	buf  []T    // len is zero or a power of two
	head uint64 // position of the oldest item
	tail uint64 // position the next push gets
	pops int    // since the last resize
}

// minRing is the smallest buffer a ring allocates. A ring shrinks, by half,
// when it is less than a quarter full, has more than shrinkRing slots and
// has seen as many pops as a quarter of its slots since it last changed
// size (so that resizing costs O(1) per pop, amortized): a ring
// whose length swings between empty and a few thousand keeps its buffer.
const (
	minRing    = 16
	shrinkRing = 1 << 13
)

func (r *ring[T]) len() int { return int(r.tail - r.head) }

// push appends x and returns its position.
func (r *ring[T]) push(x T) uint64 {
	if r.len() == len(r.buf) {
		r.resize(max(2*len(r.buf), minRing))
	}
	pos := r.tail
	r.buf[pos&uint64(len(r.buf)-1)] = x
	r.tail++
	return pos
}

// pop removes and returns the oldest item and its position. The ring must not
// be empty. The vacated slot is zeroed so the item can be collected.
func (r *ring[T]) pop() (T, uint64) {
	pos := r.head
	i := pos & uint64(len(r.buf)-1)
	x := r.buf[i]
	var zero T
	r.buf[i] = zero
	r.head++
	r.pops++
	if n := len(r.buf); n > shrinkRing && r.len() < n/4 && 4*r.pops >= n {
		r.resize(n / 2)
	}
	return x, pos
}

// at returns the item at position pos, which must be in [head, tail).
func (r *ring[T]) at(pos uint64) T { return r.buf[pos&uint64(len(r.buf)-1)] }

// clear zeroes the slot at position pos, in [head, tail), so that what it
// held can be collected.
func (r *ring[T]) clear(pos uint64) {
	var zero T
	r.buf[pos&uint64(len(r.buf)-1)] = zero
}

// reset empties the ring; the next push gets position base.
func (r *ring[T]) reset(base uint64) {
	*r = ring[T]{head: base, tail: base}
}

// resize moves the items to a buffer of n slots (a power of two ≥ len).
func (r *ring[T]) resize(n int) {
	buf := make([]T, n)
	for p := r.head; p < r.tail; p++ {
		buf[p&uint64(n-1)] = r.at(p)
	}
	r.buf = buf
	r.pops = 0
}

// stampResolution is how far apart enqueue-time checkpoints are at least:
// items added within it of the last checkpoint share its time.
const stampResolution = 1000 // nanoseconds

// stamp records that the items from position pos on were enqueued at or after
// at (nanoseconds since the queue's epoch), until the next stamp.
type stamp struct {
	pos uint64
	at  int64
}

// stamps maps ring positions to enqueue times with one checkpoint per
// stampResolution of adds rather than one per item, so a queue filled in a
// burst spends almost nothing on timestamps. An item's enqueue time is that of
// the last stamp at or before its position: exact when adds are more than
// stampResolution apart, otherwise at most stampResolution early.
type stamps struct {
	s    []stamp
	head int // stamps before head cover positions that have left the ring
}

// note records that the item at pos was enqueued at at. Positions and times
// must not decrease between calls.
func (st *stamps) note(pos uint64, at int64) {
	if n := len(st.s); n > st.head && at-st.s[n-1].at < stampResolution {
		return
	}
	st.s = append(st.s, stamp{pos, at})
}

// at returns the enqueue time of the item at pos, which is in the ring.
func (st *stamps) at(pos uint64) int64 {
	live := st.s[st.head:]
	i := sort.Search(len(live), func(i int) bool { return live[i].pos > pos })
	if i == 0 {
		return 0
	}
	return live[i-1].at
}

// pop returns the enqueue time of the item at pos, the oldest in the ring, and
// forgets the stamps that only covered older positions.
func (st *stamps) pop(pos uint64) int64 {
	for st.head+1 < len(st.s) && st.s[st.head+1].pos <= pos {
		st.head++
	}
	if st.head >= 64 && st.head > len(st.s)/2 {
		n := copy(st.s, st.s[st.head:])
		clear(st.s[n:])
		st.s = st.s[:n]
		st.head = 0
	}
	return st.s[st.head].at
}

// retried is a queued item that a failed scope put back: it keeps the
// position and enqueue time it had before it was taken, and counts its
// failed attempts (only retried items have any).
type retried[T any] struct {
	x        T
	pos      uint64
	at       int64
	attempts uint32
}

// retryHeap is a min-heap of retried items by position.
type retryHeap[T comparable] []retried[T]

func (h *retryHeap[T]) push(r retried[T]) {
	*h = append(*h, r)
	h.up(len(*h) - 1)
}

func (h *retryHeap[T]) pop() retried[T] {
	top := (*h)[0]
	h.removeAt(0)
	return top
}

// remove removes the item x, which must be in the heap. It costs O(n).
func (h *retryHeap[T]) remove(x T) {
	for i := range *h {
		if (*h)[i].x == x {
			h.removeAt(i)
			return
		}
	}
}

// removeAt removes the item at index i, and releases the heap's memory once
// it has shrunk to a quarter of its capacity (or emptied): a burst of
// failures must not hold its memory for the life of the queue.
func (h *retryHeap[T]) removeAt(i int) {
	s := *h
	last := len(s) - 1
	moved := s[last]
	s[last] = retried[T]{}
	s = s[:last]
	if i < last {
		s[i] = moved
		s.down(s.up(i))
	}
	switch {
	case len(s) == 0 && cap(s) > minRetry:
		s = nil
	case cap(s) > minRetry && len(s) < cap(s)/4:
		s = append(retryHeap[T](nil), s...)
	}
	*h = s
}

// minRetry is the capacity of put-back storage that is kept when it empties.
const minRetry = 64

// up moves the item at i up to its place and returns where that is.
func (s retryHeap[T]) up(i int) int {
	for i > 0 {
		parent := (i - 1) / 2
		if s[parent].pos <= s[i].pos {
			break
		}
		s[parent], s[i] = s[i], s[parent]
		i = parent
	}
	return i
}

// down moves the item at i down to its place.
func (s retryHeap[T]) down(i int) {
	for {
		least, l, r := i, 2*i+1, 2*i+2
		if l < len(s) && s[l].pos < s[least].pos {
			least = l
		}
		if r < len(s) && s[r].pos < s[least].pos {
			least = r
		}
		if least == i {
			break
		}
		s[i], s[least] = s[least], s[i]
		i = least
	}
}
