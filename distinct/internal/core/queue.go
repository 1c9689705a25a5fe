package core

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jobkit/jobkit/internal/keys"
)

// Queue is a deduplicating FIFO queue of comparable items with scoped takes.
// An item is queued, in progress, or absent; adding an item that is queued or
// in progress does not add it twice.
//
// The zero value is an empty, unbounded queue ready to use; New configures
// one. A Queue must not be copied after first use. All methods are safe for
// concurrent use.
//
// Costs: Add, Take of k items and settling them are O(1) per item
// (amortized), plus O(log r) for the r items that failed scopes put back, and
// do not depend on how many items are in progress. Queued, InProgress and
// Info are O(n) snapshots that run in parallel with each other. The package
// documentation has measured figures.
type Queue[T comparable] struct {
	capacity   int  // immutable after New
	rerun      bool // immutable after New
	timestamps bool // immutable after New

	// layout says how keys of type T are hashed, set by Init or by the
	// first hash.
	layout atomic.Pointer[keys.Layout]

	// mu is the write side of the gate (see gate.go) and guards every field
	// below it. It has a cache line to itself, so that goroutines spinning on
	// it do not steal the line of the fields its holder is writing. The
	// fields every add, take and settle touch come first, so that a hold of
	// the lock moves as few cache lines between cores as it can.
	_  [64]byte
	mu sync.Mutex
	_  [56]byte

	readers   int           // active readers (see gate.go)
	takeTurn  chan struct{} // held by the taker that waits on activity
	closed    bool
	stopDrain bool // a ShutDown without drain stops a ShutDown with drain

	// Every item the queue holds is in items, queued or in progress: one
	// lookup answers an add, and a take or a failure changes an entry in
	// place instead of moving it between tables. queuedN and takenN count
	// the two states.
	queuedN int
	takenN  int
	items   table[T, loc]

	// Queued items. Every queued item is in items, with where it is and
	// its count of collisions, and once more in retry (put back by a failed
	// scope, with its failed attempts) or fresh (never taken, so no
	// attempts). Every item in retry precedes every item in fresh: an item
	// that was taken was at the head of the queue then, ahead of all items
	// that are still fresh.
	fresh    ring[T]
	activity signal // an item was queued, the queue closed or emptied

	// In-progress items: each has a flight in flights, which its entry in
	// items indexes, and a place in its batch.
	flights arena[T]
	free    []*batch[T] // settled batches for reuse

	retry retryHeap[T] // by original position
	// holes are the positions in fresh of items Remove took out; their
	// slots are zeroed, and taking skips them.
	holes map[uint64]struct{}

	stats Stats

	// Colder fields.
	writers    int // waiting writers (see gate.go)
	noReaders  signal
	noWriters  signal
	epoch      time.Time     // times are kept as nanoseconds since epoch
	stamps     stamps        // enqueue times of fresh items
	room       signal        // capacity was freed or the queue closed
	addTurn    chan struct{} // held by the adder that waits on room
	addWaiters int           // AddWait calls waiting for room or for addTurn
}

// loc is what the table of items keeps of an item: where it is, in three
// 16-bit words, so that with an 8-byte key a table cell takes 16 bytes.
//
//   - Queued: the low 32 bits of its position, which find it in fresh (no
//     queue holds 2³² items), and in the third word how many adds of it were
//     rejected while it was queued, saturating at 32767.
//   - In progress: the index of its flight in the arena, and the third word
//     0x8000.
type loc [3]uint16

const takenBit = 0x8000

func queuedLoc(pos uint64, collisions uint32) loc {
	return loc{uint16(pos), uint16(pos >> 16), uint16(min(collisions, maxCollisions))}
}

func takenLoc(f uint32) loc { return loc{uint16(f), uint16(f >> 16), takenBit} }

// maxCollisions is where the count of a queued item's collisions saturates.
const maxCollisions = takenBit - 1

func (l loc) taken() bool         { return l[2]&takenBit != 0 }
func (l loc) low32() uint32       { return uint32(l[0]) | uint32(l[1])<<16 }
func (l loc) collisions() uint32  { return uint32(l[2]) } // of a queued item
func (l loc) pos32() uint32       { return l.low32() }    // of a queued item
func (l loc) flightIndex() uint32 { return l.low32() }    // of an item in progress

// collide counts a rejected add of a queued item.
func (l *loc) collide() {
	if l[2] < maxCollisions {
		l[2]++
	}
}

// counts holds per-item counters that survive a take.
type counts struct {
	attempts   uint32 // failed scopes
	collisions uint32 // rejected adds of the item while it was queued or in progress
}

// Init configures a new, unused queue with cfg, which is valid.
func (q *Queue[T]) Init(cfg Config) {
	q.capacity, q.rerun, q.timestamps = cfg.Capacity, cfg.Rerun, cfg.Timestamps
	q.layout.Store(keys.LayoutOf[T]())
	// What the first add and take would allocate, allocated here.
	q.initLocked()
	q.items.reserve(1)
	q.fresh.resize(minRing)
	q.free = append(make([]*batch[T], 0, 4), &batch[T]{q: q, keys: make([]T, 0, 1), flights: make([]uint32, 0, 1)})
	q.flights.slots = make([]flight[T], 0, 4)
	q.flights.free = make([]uint32, 0, 4)
}

func (q *Queue[T]) initLocked() {
	q.epoch = time.Now()
	q.takeTurn = make(chan struct{}, 1)
	q.addTurn = make(chan struct{}, 1)
}

// hash returns the hash of x, or false if x cannot be a key: it is not
// equal to itself or cannot be hashed (see keys.Kind).
func (q *Queue[T]) hash(x T) (uint64, bool) {
	l := q.layout.Load()
	if l == nil { // a zero Queue
		l = keys.LayoutOf[T]()
		q.layout.Store(l)
	}
	return keys.HashWith(l, x)
}

// invalidKey returns the error for a key hash refused.
func invalidKey[T comparable](x T) error {
	return fmt.Errorf("%w: key %v is not equal to itself or cannot be hashed", ErrInvalid, keys.Describe(x))
}

// nowLocked returns the time in nanoseconds since the queue's epoch, or 0
// unless Config.Timestamps.
func (q *Queue[T]) nowLocked() int64 {
	if !q.timestamps {
		return 0
	}
	return int64(time.Since(q.epoch))
}

// time returns the time ns after the epoch, or the zero time unless
// Config.Timestamps.
func (q *Queue[T]) time(ns int64) time.Time {
	if !q.timestamps {
		return time.Time{}
	}
	return q.epoch.Add(time.Duration(ns))
}

// Add adds x at the tail of the queue and reports true, or reports false if x
// is already queued (it keeps its position), in progress (rejected, unless
// Config.Rerun), or the queue is closed or full. Add never blocks for long:
// it waits only for snapshots in progress to finish. An Add that wakes no
// waiting taker allocates nothing once the queue has grown to size.
//
// A key that is not equal to itself (a NaN, or a struct, array or interface
// holding one) could never be found again, and a key whose dynamic type
// cannot be hashed (a slice in an any) cannot be stored: Add reports false
// for both and counts them in Stats.Invalid, leaving the queue as it was.
// Only key types that can hold a float or an interface pay for the check.
func (q *Queue[T]) Add(x T) bool {
	added, _ := q.TryAdd(x)
	return added
}

// TryAdd is Add that says why an item was not added: it returns (true, nil)
// when x was added, (false, nil) when x is a duplicate, ErrFull when the queue
// holds Config.Capacity items, ErrClosed after Close, and an error wrapping
// ErrInvalid for a key that is not equal to itself or cannot be hashed.
func (q *Queue[T]) TryAdd(x T) (bool, error) {
	h, ok := q.hash(x) // before the lock: keep the critical section short
	q.lock()
	if !ok {
		q.stats.Invalid++
		q.mu.Unlock()
		return false, invalidKey(x)
	}
	added, err := q.addLocked(x, h)
	q.mu.Unlock()
	return added, err
}

// AddWait is TryAdd that waits for room while the queue is full, first come
// first served among waiting adders. It returns ctx's error if ctx is done
// before there is room, with nothing added, and an error wrapping ErrInvalid
// at once for a nil ctx or an invalid key (see Add).
func (q *Queue[T]) AddWait(ctx context.Context, x T) (bool, error) {
	if ctx == nil {
		return false, fmt.Errorf("%w: nil context", ErrInvalid)
	}
	h, ok := q.hash(x)
	if !ok {
		q.lock()
		q.stats.Invalid++
		q.mu.Unlock()
		return false, invalidKey(x)
	}
	var added bool
	lined, first := false, true // lined: counted in q.addWaiters
	err := q.await(ctx, &q.addTurn, &q.room, func() (bool, error) {
		if first {
			first = false
			// Adders wait for room: line up behind them, unless x needs
			// no room (it is held already, or the queue is closed).
			if q.addWaiters > 0 && !q.closed {
				if _, held := q.items.lookup(x, h); !held {
					q.addWaiters++
					lined = true
					return false, nil
				}
			}
		}
		var err error
		added, err = q.addLocked(x, h)
		if err == ErrFull {
			if !lined {
				q.addWaiters++
				lined = true
			}
			return false, nil
		}
		if lined {
			q.addWaiters--
			lined = false
		}
		return true, err
	})
	if lined { // ctx was done while waiting
		q.lock()
		q.addWaiters--
		q.mu.Unlock()
	}
	return added, err
}

// AddAll adds xs in order, as Add would one by one but under one lock, and
// returns the items that were not added (duplicates, including repeats within
// xs, invalid keys, and items refused because the queue is full or closed),
// or nil.
func (q *Queue[T]) AddAll(xs []T) []T {
	var rest []T
	q.lock()
	defer q.mu.Unlock()
	for _, x := range xs {
		h, ok := q.hash(x) // never panics: see keys.Kind
		if !ok {
			q.stats.Invalid++
			rest = append(rest, x)
			continue
		}
		if added, _ := q.addLocked(x, h); !added {
			rest = append(rest, x)
		}
	}
	return rest
}

// addLocked adds x, whose hash is h.
func (q *Queue[T]) addLocked(x T, h uint64) (bool, error) {
	if q.closed {
		return false, ErrClosed
	}
	q.items.reserve(1)
	i, found := q.items.find(x, h)
	if found {
		l := q.items.at(i)
		if !l.taken() {
			l.collide()
			q.stats.Rejected++
			return false, nil
		}
		f := q.flights.at(l.flightIndex())
		f.collisions++
		if q.rerun && !f.rerun {
			f.rerun = true
			q.stats.Added++
			return true, nil
		}
		q.stats.Rejected++
		return false, nil
	}
	if q.capacity > 0 && q.items.len() >= q.capacity {
		return false, ErrFull
	}
	q.items.insertAt(i, x, h, queuedLoc(q.appendLocked(x), 0))
	q.queuedN++
	q.stats.Added++
	return true, nil
}

// appendLocked appends x to the fresh items, wakes a taker and returns x's
// position. The caller puts x in q.items.
func (q *Queue[T]) appendLocked(x T) uint64 {
	pos := q.fresh.push(x)
	if q.timestamps {
		q.stamps.note(pos, q.nowLocked())
	}
	q.activity.broadcastLocked()
	return pos
}

// popLocked removes the first queued item and returns it with its position,
// enqueue time and failed attempts. At least one item must be queued.
func (q *Queue[T]) popLocked() (x T, pos uint64, at int64, attempts uint32) {
	if len(q.retry) > 0 {
		r := q.retry.pop()
		return r.x, r.pos, r.at, r.attempts
	}
	for {
		x, pos = q.fresh.pop()
		if q.timestamps {
			at = q.stamps.pop(pos)
		}
		if len(q.holes) == 0 {
			return x, pos, at, 0
		}
		if _, hole := q.holes[pos]; !hole {
			return x, pos, at, 0
		}
		delete(q.holes, pos)
	}
}

// freshPos returns the position of x in fresh, given the low 32 bits of it
// from q.items, or false if x is not there: then a failed scope put it back
// and it is in retry.
func (q *Queue[T]) freshPos(x T, pos32 uint32) (uint64, bool) {
	pos := q.fresh.head + uint64(pos32-uint32(q.fresh.head))
	if pos >= q.fresh.tail || q.fresh.at(pos) != x {
		return 0, false
	}
	if _, hole := q.holes[pos]; hole { // a zeroed slot, and x is the zero T
		return 0, false
	}
	return pos, true
}

// Remove removes x if it is queued and reports whether it did. It does not
// touch an in-progress item, and reports false for a key that is not equal to
// itself or cannot be hashed (see Add). Nothing of x is kept: its slot is
// cleared at once, and the hole left behind is skipped when reached, or
// compacted away once holes outnumber queued items. The cost is O(1)
// amortized, or O(r) for an item among the r that failed scopes put back.
func (q *Queue[T]) Remove(x T) bool {
	h, ok := q.hash(x)
	if !ok {
		return false
	}
	q.lock()
	defer q.mu.Unlock()
	if q.items.len() == 0 {
		return false
	}
	i, ok := q.items.find(x, h)
	if !ok || q.items.at(i).taken() {
		return false
	}
	e := *q.items.at(i)
	q.items.delAt(i)
	q.queuedN--
	if pos, ok := q.freshPos(x, e.pos32()); ok {
		q.fresh.clear(pos)
		if q.holes == nil {
			q.holes = make(map[uint64]struct{})
		}
		q.holes[pos] = struct{}{}
	} else {
		q.retry.remove(x)
	}
	q.stats.Removed++
	if n := len(q.holes); n > 0 && (q.queuedN == 0 || (n >= 64 && n > q.queuedN)) {
		q.compactLocked()
	}
	q.leftLocked()
	return true
}

// leftLocked wakes whoever waits for an item to leave the queue for good:
// adders waiting for room and, once closed and empty, Drain (or, once
// closed with nothing in progress, ShutDown).
func (q *Queue[T]) leftLocked() {
	if q.capacity > 0 {
		q.room.broadcastLocked()
	}
	if q.closed && q.takenN == 0 {
		q.activity.broadcastLocked()
	}
}

// compactLocked drops the holes from fresh, keeping the order and enqueue
// times, and renumbers the fresh items' positions from the head on.
func (q *Queue[T]) compactLocked() {
	var fresh ring[T]
	var st stamps
	fresh.reset(q.fresh.head)
	q.walkLocked(func(x T, pos uint64, at int64, _ uint32, retried bool) bool {
		if retried {
			return true
		}
		npos := fresh.push(x)
		if q.timestamps {
			st.note(npos, at)
		}
		h, _ := q.hash(x) // a queued key is valid
		e := q.items.get(x, h)
		*e = queuedLoc(npos, e.collisions())
		return true
	})
	q.fresh, q.stamps, q.holes = fresh, st, nil
}

// Close closes the queue: later adds are refused (Add reports false, TryAdd
// and AddWait return ErrClosed), and takers drain what is queued, then get
// ErrClosed. Items in progress settle as usual; a failed scope still puts its
// items back, for a later Take. Close is idempotent.
func (q *Queue[T]) Close() {
	q.lock()
	if !q.closed {
		q.closed = true
		q.activity.broadcastLocked()
		q.room.broadcastLocked()
	}
	q.mu.Unlock()
}

// Drain closes the queue and waits until nothing is queued or in progress:
// takers have drained it and every scope has settled. It returns ctx's error
// if ctx is done first.
func (q *Queue[T]) Drain(ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("%w: nil context", ErrInvalid)
	}
	q.Close()
	return q.await(ctx, nil, &q.activity, func() (bool, error) {
		return q.items.len() == 0, nil
	})
}
