package distinct

import (
	"context"
	"fmt"
	"sync"
	"time"
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

	// mu is the write side of the gate (see gate.go) and guards every field
	// below it. It has a cache line to itself, so that goroutines spinning on
	// it do not steal the line of the fields its holder is writing. readers
	// and writers count active readers and waiting writers.
	_         [64]byte
	mu        sync.Mutex
	_         [56]byte
	readers   int
	writers   int
	noReaders signal
	noWriters signal

	epoch  time.Time // times are kept as nanoseconds since epoch
	closed bool

	// Queued items. Every queued item is in queued, with its count of
	// collisions, and once more in retry (put back by a failed scope, with
	// its failed attempts) or fresh (never taken, so no attempts).
	// Every item in retry precedes every item in fresh: an item that was
	// taken was at the head of the queue then, ahead of all items that are
	// still fresh.
	queued table[T, uint32]
	fresh  ring[T]
	stamps stamps       // enqueue times of fresh items
	retry  retryHeap[T] // by original position
	// Remove leaves the item's slot in fresh or retry behind; stale counts
	// such slots per item, and taking skips them.
	stale  map[T]int
	nstale int

	inProgress table[T, slot[T]]
	free       []*batch[T] // settled batches for reuse

	activity signal        // an item was queued, the queue closed or emptied
	room     signal        // capacity was freed or the queue closed
	takeTurn chan struct{} // held by the taker that waits on activity
	addTurn  chan struct{} // held by the adder that waits on room

	stats Stats
}

// counts holds per-item counters that survive a take.
type counts struct {
	attempts   uint32 // failed scopes
	collisions uint32 // rejected adds of the item while it was queued or in progress
}

// slot locates an in-progress item: its batch and index there.
type slot[T comparable] struct {
	b *batch[T]
	i int
}

// New returns an empty queue configured by cfg, or an error wrapping
// ErrInvalid if cfg is invalid.
func New[T comparable](cfg Config) (*Queue[T], error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Queue[T]{capacity: cfg.Capacity, rerun: cfg.Rerun, timestamps: cfg.Timestamps}, nil
}

func (q *Queue[T]) initLocked() {
	q.epoch = time.Now()
	q.stale = make(map[T]int)
	q.takeTurn = make(chan struct{}, 1)
	q.addTurn = make(chan struct{}, 1)
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
func (q *Queue[T]) Add(x T) bool {
	added, _ := q.TryAdd(x)
	return added
}

// TryAdd is Add that says why an item was not added: it returns (true, nil)
// when x was added, (false, nil) when x is a duplicate, ErrFull when the queue
// holds Config.Capacity items, and ErrClosed after Close.
func (q *Queue[T]) TryAdd(x T) (bool, error) {
	h := hash(x) // before the lock: keep the critical section short
	q.lock()
	added, err := q.addLocked(x, h)
	q.mu.Unlock()
	return added, err
}

// AddWait is TryAdd that waits for room while the queue is full, first come
// first served among waiting adders. It returns ctx's error if ctx is done
// before there is room, with nothing added.
func (q *Queue[T]) AddWait(ctx context.Context, x T) (bool, error) {
	if ctx == nil {
		return false, fmt.Errorf("%w: nil context", ErrInvalid)
	}
	var added bool
	h := hash(x)
	err := q.await(ctx, &q.addTurn, &q.room, func() (bool, error) {
		var err error
		added, err = q.addLocked(x, h)
		if err == ErrFull {
			return false, nil
		}
		return true, err
	})
	return added, err
}

// AddAll adds xs in order, as Add would one by one but under one lock, and
// returns the items that were not added (duplicates, including repeats within
// xs, and items refused because the queue is full or closed), or nil.
func (q *Queue[T]) AddAll(xs []T) []T {
	var rest []T
	q.lock()
	for _, x := range xs {
		if added, _ := q.addLocked(x, hash(x)); !added {
			rest = append(rest, x)
		}
	}
	q.mu.Unlock()
	return rest
}

// addLocked adds x, whose hash is h.
func (q *Queue[T]) addLocked(x T, h uint64) (bool, error) {
	if q.closed {
		return false, ErrClosed
	}
	q.queued.reserve(1)
	i, found := q.queued.find(x, h)
	if found {
		*q.queued.at(i)++
		q.stats.Rejected++
		return false, nil
	}
	if s := q.inProgress.get(x, h); s != nil {
		f := &s.b.flights[s.i]
		f.collisions++
		if q.rerun && !f.rerun {
			f.rerun = true
			q.stats.Added++
			return true, nil
		}
		q.stats.Rejected++
		return false, nil
	}
	if q.capacity > 0 && q.queued.len()+q.inProgress.len() >= q.capacity {
		return false, ErrFull
	}
	q.queued.insertAt(i, x, h, 0)
	q.appendLocked(x)
	q.stats.Added++
	return true, nil
}

// pushLocked queues x, which is absent and hashes to h, at the tail and wakes
// a taker.
func (q *Queue[T]) pushLocked(x T, h uint64) {
	q.queued.put(x, h, 0)
	q.appendLocked(x)
}

// appendLocked appends x, just added to q.queued, to the fresh items and
// wakes a taker.
func (q *Queue[T]) appendLocked(x T) {
	pos := q.fresh.push(x)
	if q.timestamps {
		q.stamps.note(pos, q.nowLocked())
	}
	q.activity.broadcastLocked()
}

// popLocked removes the first queued item and returns it with its position,
// enqueue time and failed attempts. At least one item must be queued.
func (q *Queue[T]) popLocked() (x T, pos uint64, at int64, attempts uint32) {
	for {
		if len(q.retry) > 0 {
			r := q.retry.pop()
			x, pos, at, attempts = r.x, r.pos, r.at, r.attempts
		} else {
			attempts = 0
			x, pos = q.fresh.pop()
			if q.timestamps {
				at = q.stamps.pop(pos)
			}
		}
		if q.nstale == 0 || !q.dropStaleLocked(x) {
			return x, pos, at, attempts
		}
	}
}

// dropStaleLocked reports whether a slot of x just popped is stale, and if so
// forgets it.
func (q *Queue[T]) dropStaleLocked(x T) bool {
	n := q.stale[x]
	switch n {
	case 0:
		return false
	case 1:
		delete(q.stale, x)
	default:
		q.stale[x] = n - 1
	}
	q.nstale--
	return true
}

// Remove removes x if it is queued and reports whether it did. It does not
// touch an in-progress item. The cost is O(1) amortized: the slot x leaves
// behind is skipped when reached, and compacted away once stale slots
// outnumber queued items.
func (q *Queue[T]) Remove(x T) bool {
	q.lock()
	defer q.mu.Unlock()
	h := hash(x)
	if _, ok := q.queued.del(x, h); !ok {
		return false
	}
	q.stale[x]++
	q.nstale++
	q.stats.Removed++
	if q.queued.len() == 0 || (q.nstale >= 64 && q.nstale > q.queued.len()) {
		q.compactLocked()
	}
	q.leftLocked()
	return true
}

// leftLocked wakes whoever waits for an item to leave the queue for good:
// adders waiting for room and, once closed and empty, Drain.
func (q *Queue[T]) leftLocked() {
	if q.capacity > 0 {
		q.room.broadcastLocked()
	}
	if q.closed && q.queued.len() == 0 && q.inProgress.len() == 0 {
		q.activity.broadcastLocked()
	}
}

// compactLocked drops stale slots, keeping order, positions' order and
// enqueue times.
func (q *Queue[T]) compactLocked() {
	base := q.fresh.head
	var retry retryHeap[T]
	var fresh ring[T]
	var st stamps
	fresh.reset(base)
	q.walkLocked(func(x T, pos uint64, at int64, attempts uint32, fromRetry bool) bool {
		if fromRetry { // in order, so retry stays a valid heap
			retry = append(retry, retried[T]{x: x, pos: pos, at: at, attempts: attempts})
		} else if pos := fresh.push(x); q.timestamps {
			st.note(pos, at)
		}
		return true
	})
	q.retry, q.fresh, q.stamps = retry, fresh, st
	clear(q.stale)
	q.nstale = 0
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
		return q.queued.len() == 0 && q.inProgress.len() == 0, nil
	})
}
