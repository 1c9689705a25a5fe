package core

import (
	"context"
	"fmt"

	"github.com/jobkit/jobkit/scope"
)

// batch is the set of items one Take or Process handed out. It is the
// scope's finalizer for a Take. Batches are reused once settled.
type batch[T comparable] struct {
	q       *Queue[T]
	owner   *scope.Scope // the scope of a Take; nil for Process
	takenAt int64
	keys    []T      // the items; zeroed where Complete or Fail settled one
	flights []uint32 // index in q.flights of each item's flight, or settled
}

// settled marks an item of a batch that was settled early.
const settled = ^uint32(0)

// flight is what the queue remembers of an item while it is in progress.
type flight[T comparable] struct {
	counts
	hash  uint64    // of the item
	pos   uint64    // original position, where a failure puts it back
	at    int64     // enqueue time
	b     *batch[T] // the batch it was taken in
	i     uint32    // its index there
	rerun bool      // added again while in progress (Config.Rerun)
}

// arena holds the flights of the items in progress, reusing the slots of
// settled ones. When nothing is in progress it keeps its slots for the next
// takes, unless they were too many for too long: after arenaPatience times in
// a row that nothing was in progress and less than a quarter of more than
// maxFreeCap slots had been used since the time before, it gives its memory
// back. A steady load so keeps its arena (no allocation), and the memory of
// a burst is released once the load is small again.
type arena[T comparable] struct {
	slots []flight[T]
	free  []uint32 // indexes of unused slots
	small int      // times in a row the slots were mostly unused
}

// alloc returns the index of an unused slot.
func (a *arena[T]) alloc() uint32 {
	if n := len(a.free); n > 0 {
		i := a.free[n-1]
		a.free = a.free[:n-1]
		return i
	}
	a.slots = append(a.slots, flight[T]{})
	return uint32(len(a.slots) - 1)
}

func (a *arena[T]) at(i uint32) *flight[T] { return &a.slots[i] }

// release frees slot i; live is the number of slots still in use.
func (a *arena[T]) release(i uint32, live int) {
	a.slots[i].b = nil // its other fields are set again by the next take
	if live > 0 {
		a.free = append(a.free, i)
		return
	}
	// Every slot is free. len(a.slots) is the most that were in use at
	// once since the last time none was.
	if c := cap(a.slots); c > maxFreeCap && len(a.slots) < c/4 {
		if a.small++; a.small >= arenaPatience {
			*a = arena[T]{}
			return
		}
	} else {
		a.small = 0
	}
	a.slots, a.free = a.slots[:0], a.free[:0]
}

// maxFree bounds the batches kept for reuse, and maxFreeCap the size of one
// (and the slots an arena keeps however little it is used); arenaPatience is
// how many mostly unused drains in a row an arena waits before it gives its
// slots back.
const (
	maxFree       = 256
	maxFreeCap    = 1024
	arenaPatience = 16
)

// Take waits until at least one item is queued, then takes between 1 and max
// of them in FIFO order, marks them in progress, and registers one finalizer
// on s that settles them when s closes: success removes them, failure (an
// error, a panic or an interruption) puts them back as queued in their
// original positions. Items can also be settled one by one before s closes,
// with Complete and Fail.
//
// If ctx is done while Take waits, it returns ctx's error and changes
// nothing. A ctx that is already done when Take is called does not stop it
// from taking items that are queued: like semaphore.Weighted.Acquire, Take
// fails with ctx's error only when it would have to wait (Work, by contrast,
// checks ctx before each batch). Once the queue is closed and nothing is
// queued Take returns ErrClosed. It returns scope.ErrClosed if s is closed,
// and an error wrapping ErrInvalid for a nil ctx or s or a max below one.
// The returned slice belongs to the caller.
func (q *Queue[T]) Take(ctx context.Context, s *scope.Scope, max int) ([]T, error) {
	return q.TakeAppend(ctx, s, max, nil)
}

// TakeAppend is Take that appends the items it takes to dst and returns the
// extended slice, so that a caller with a buffer of its own takes without
// allocating. On error it returns dst unchanged.
func (q *Queue[T]) TakeAppend(ctx context.Context, s *scope.Scope, max int, dst []T) ([]T, error) {
	if s == nil {
		return dst, fmt.Errorf("%w: nil scope", ErrInvalid)
	}
	if err := checkTake(ctx, max); err != nil {
		return dst, err
	}
	if s.Closed() {
		return dst, scope.ErrClosed
	}
	n := len(dst)
	b, err := q.take(ctx, max, s, nil, &dst)
	if err != nil {
		return dst, err
	}
	if !s.TryAdd(b) { // s closed meanwhile: undo the take
		q.lock()
		q.settleAllLocked(b, restore)
		q.mu.Unlock()
		clear(dst[n:])
		return dst[:n], scope.ErrClosed
	}
	return dst, nil
}

// Process takes a batch as Take does and calls f with it, as if inside a
// scope of its own that closes when f returns: if f returns nil the items are
// removed; if it returns an error, panics, or returns an error caused by the
// cancellation of ctx, they go back to their original positions. A panic in f
// is returned as a *scope.PanicError; otherwise Process returns f's error.
//
// Process allocates nothing in steady state. The items slice is reused after
// f returns: f must not keep it.
func (q *Queue[T]) Process(ctx context.Context, max int, f func(ctx context.Context, items []T) error) error {
	if f == nil {
		return fmt.Errorf("%w: nil function", ErrInvalid)
	}
	if err := checkTake(ctx, max); err != nil {
		return err
	}
	b, err := q.take(ctx, max, nil, nil, nil)
	if err != nil {
		return err
	}
	exit, err := b.call(ctx, f)
	_ = b.Finalize(exit)
	return err
}

// call runs f on b's items as scope.Call does and returns the exit. If f
// ends its goroutine instead (runtime.Goexit, as t.FailNow does), b is
// settled as failed on the way out, so that its items go back.
func (b *batch[T]) call(ctx context.Context, f func(ctx context.Context, items []T) error) (scope.Exit, error) {
	returned := false
	defer func() {
		if !returned {
			_ = b.Finalize(scope.Failed(scope.ErrGoexit))
		}
	}()
	exit, err := scope.Call(ctx, func(ctx context.Context) error { return f(ctx, b.keys) })
	returned = true
	return exit, err
}

// Work is Process in a loop: it processes batch after batch until Process
// would return an error, and returns that error: f's error or panic (after
// putting the batch back), ErrClosed once the queue is closed and drained,
// or ctx's error once ctx is done. Work checks ctx before it takes each
// batch, so a cancelled Work takes no further batch; the batch it last
// processed is settled before it returns.
//
// Work is faster than calling Process in a loop: it settles a batch and takes
// the next one under one hold of the queue's lock. Like Process, it allocates
// nothing in steady state, and f must not keep the items slice.
func (q *Queue[T]) Work(ctx context.Context, max int, f func(ctx context.Context, items []T) error) error {
	if f == nil {
		return fmt.Errorf("%w: nil function", ErrInvalid)
	}
	if err := checkTake(ctx, max); err != nil {
		return err
	}
	var done *batch[T] // processed, to be settled as complete
	defer func() {
		// ctx is done, or its Err panicked or called runtime.Goexit: the
		// batch processed last succeeded all the same.
		if done != nil {
			_ = done.Finalize(scope.Succeeded())
		}
	}()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		// take settles d at once, under the lock, before its wait can
		// panic (a ctx's Done method): done must not settle it again.
		d := done
		done = nil
		b, err := q.take(ctx, max, nil, d, nil)
		if err != nil {
			return err
		}
		exit, err := b.call(ctx, f)
		if exit.Failed() {
			_ = b.Finalize(exit)
			return err
		}
		done = b
	}
}

func checkTake(ctx context.Context, max int) error {
	if ctx == nil {
		return fmt.Errorf("%w: nil context", ErrInvalid)
	}
	if max < 1 {
		return fmt.Errorf("%w: max %d < 1", ErrInvalid, max)
	}
	return nil
}

// take waits for items and takes up to max of them into a batch for owner
// (nil for Process and Work). It first settles done, if not nil, as complete,
// under the same hold of the lock. If dst is not nil, it appends the items to
// *dst under that hold too: once the lock is released, Complete or Fail under
// owner may settle them, which clears them from the batch.
func (q *Queue[T]) take(ctx context.Context, max int, owner *scope.Scope, done *batch[T], dst *[]T) (*batch[T], error) {
	var b *batch[T]
	err := q.await(ctx, &q.takeTurn, &q.activity, func() (bool, error) {
		if done != nil {
			q.settleAllLocked(done, complete)
			done = nil
		}
		if q.queuedN > 0 {
			b = q.takeLocked(max, owner)
			if dst != nil {
				*dst = append(*dst, b.keys...)
			}
			return true, nil
		}
		if q.closed {
			return false, ErrClosed
		}
		return false, nil
	})
	return b, err // done was settled by the first try: await always makes one
}

// takeLocked moves up to max queued items, at least one, into a new batch.
func (q *Queue[T]) takeLocked(max int, owner *scope.Scope) *batch[T] {
	n := min(max, q.queuedN)
	var b *batch[T]
	if k := len(q.free); k > 0 {
		b = q.free[k-1]
		q.free[k-1] = nil
		q.free = q.free[:k-1]
	} else {
		b = &batch[T]{q: q}
	}
	b.owner = owner
	b.takenAt = q.nowLocked()
	for i := range n {
		x, pos, at, attempts := q.popLocked()
		h, _ := q.hash(x) // a queued key is valid
		j, _ := q.items.find(x, h)
		l := q.items.at(j)
		fi := q.flights.alloc()
		f := q.flights.at(fi) // set field by field: one pointer write, no copy of the whole
		f.attempts, f.collisions = attempts, l.collisions()
		f.hash, f.pos, f.at = h, pos, at
		f.b, f.i, f.rerun = b, uint32(i), false
		*l = takenLoc(fi)
		b.keys = append(b.keys, x)
		b.flights = append(b.flights, fi)
	}
	q.queuedN -= n
	q.takenN += n
	return b
}

// outcome is how an in-progress item settles.
type outcome uint8

const (
	complete outcome = iota // remove it
	fail                    // put it back, counting a failed attempt
	restore                 // put it back as if never taken
)

// Finalize settles the items of b still in progress by exit and recycles b.
// It is the scope.Finalizer a Take registers.
func (b *batch[T]) Finalize(exit scope.Exit) error {
	q := b.q
	how := complete
	if exit.Failed() {
		how = fail
	}
	q.lock()
	q.settleAllLocked(b, how)
	q.mu.Unlock()
	return nil
}

func (q *Queue[T]) settleAllLocked(b *batch[T], how outcome) {
	for i := range b.keys {
		q.settleLocked(b, i, how, -1)
	}
	q.recycleLocked(b)
}

// recycleLocked keeps b, settled, for reuse.
func (q *Queue[T]) recycleLocked(b *batch[T]) {
	clear(b.keys)
	b.keys = b.keys[:0]
	b.flights = b.flights[:0]
	b.owner = nil
	if len(q.free) < maxFree && cap(b.keys) <= maxFreeCap {
		q.free = append(q.free, b)
	}
}

// settleLocked settles item i of b as how. j is the item's slot in
// q.items, or -1 if the caller has not found it.
func (q *Queue[T]) settleLocked(b *batch[T], i int, how outcome, j int) {
	fi := b.flights[i]
	if fi == settled {
		return
	}
	b.flights[i] = settled
	f := *q.flights.at(fi)
	q.takenN--
	q.flights.release(fi, q.takenN)
	x := b.keys[i]
	if j < 0 {
		j = q.items.mustFind(x, f.hash)
	}
	switch {
	case how == complete && f.rerun:
		q.stats.Completed++
		*q.items.at(j) = queuedLoc(q.appendLocked(x), 0)
		q.queuedN++
	case how == complete:
		q.stats.Completed++
		q.items.delAt(j)
		q.leftLocked()
	default:
		if how == fail {
			f.attempts++
			q.stats.Requeued++
		}
		*q.items.at(j) = queuedLoc(f.pos, f.collisions)
		q.queuedN++
		q.retry.push(retried[T]{x: x, pos: f.pos, at: f.at, attempts: f.attempts})
		q.activity.broadcastLocked()
	}
}

// Complete settles x, taken under s, as done before s closes: x is removed
// (or, under Config.Rerun, queued again if it was added meanwhile). It
// reports whether it did anything: it does nothing if x is not in progress
// under s, for instance because it was settled already, or if x cannot be a
// key (see Add).
func (q *Queue[T]) Complete(s *scope.Scope, x T) bool { return q.settleOne(s, x, complete) }

// Fail settles x, taken under s, as failed before s closes: x goes back to
// its original position and its failed attempts grow by one. It reports
// whether it did anything, as Complete does.
func (q *Queue[T]) Fail(s *scope.Scope, x T) bool { return q.settleOne(s, x, fail) }

func (q *Queue[T]) settleOne(s *scope.Scope, x T, how outcome) bool {
	h, ok := q.hash(x)
	if s == nil || !ok {
		return false
	}
	q.lock()
	defer q.mu.Unlock()
	l := q.items.get(x, h)
	if l == nil || !l.taken() {
		return false
	}
	f := q.flights.at(l.flightIndex())
	b, i := f.b, int(f.i)
	if b.owner != s {
		return false
	}
	q.settleLocked(b, i, how, -1)
	// b lives as long as s: it must keep nothing of x, which the queue
	// may hand out again and complete meanwhile.
	var zero T
	b.keys[i] = zero
	return true
}
