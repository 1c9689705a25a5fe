package distinct

import (
	"context"

	"github.com/jobkit/jobkit/distinct/internal/core"
	"github.com/jobkit/jobkit/scope"
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
	c core.Queue[T]
}

// New returns an empty queue configured by cfg, or an error wrapping
// ErrInvalid if cfg is invalid.
func New[T comparable](cfg Config) (*Queue[T], error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	q := new(Queue[T])
	q.c.Init(core.Config{Capacity: cfg.Capacity, Rerun: cfg.Rerun, Timestamps: cfg.Timestamps})
	return q, nil
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
	return q.c.Add(x)
}

// TryAdd is Add that says why an item was not added: it returns (true, nil)
// when x was added, (false, nil) when x is a duplicate, ErrFull when the queue
// holds Config.Capacity items, ErrClosed after Close, and an error wrapping
// ErrInvalid for a key that is not equal to itself or cannot be hashed.
func (q *Queue[T]) TryAdd(x T) (bool, error) {
	return q.c.TryAdd(x)
}

// AddWait is TryAdd that waits for room while the queue is full, first come
// first served among waiting adders. It returns ctx's error if ctx is done
// before there is room, with nothing added, and an error wrapping ErrInvalid
// at once for a nil ctx or an invalid key (see Add).
func (q *Queue[T]) AddWait(ctx context.Context, x T) (bool, error) {
	return q.c.AddWait(ctx, x)
}

// AddAll adds xs in order, as Add would one by one but under one lock, and
// returns the items that were not added (duplicates, including repeats within
// xs, invalid keys, and items refused because the queue is full or closed),
// or nil.
func (q *Queue[T]) AddAll(xs []T) []T {
	return q.c.AddAll(xs)
}

// Remove removes x if it is queued and reports whether it did. It does not
// touch an in-progress item, and reports false for a key that is not equal to
// itself or cannot be hashed (see Add). Nothing of x is kept: its slot is
// cleared at once, and the hole left behind is skipped when reached, or
// compacted away once holes outnumber queued items. The cost is O(1)
// amortized, or O(r) for an item among the r that failed scopes put back.
func (q *Queue[T]) Remove(x T) bool {
	return q.c.Remove(x)
}

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
// The returned slice belongs to the caller; it is the one allocation of a
// Take (TakeAppend into a buffer of the caller's avoids it).
func (q *Queue[T]) Take(ctx context.Context, s *scope.Scope, max int) ([]T, error) {
	return q.c.Take(ctx, s, max)
}

// TakeAppend is Take that appends the items it takes to dst and returns the
// extended slice, so that a caller with a buffer of its own takes without
// allocating. On error it returns dst unchanged.
func (q *Queue[T]) TakeAppend(ctx context.Context, s *scope.Scope, max int, dst []T) ([]T, error) {
	return q.c.TakeAppend(ctx, s, max, dst)
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
	return q.c.Process(ctx, max, f)
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
	return q.c.Work(ctx, max, f)
}

// Complete settles x, taken under s, as done before s closes: x is removed
// (or, under Config.Rerun, queued again if it was added meanwhile). It
// reports whether it did anything: it does nothing if x is not in progress
// under s, for instance because it was settled already, or if x cannot be a
// key (see Add).
func (q *Queue[T]) Complete(s *scope.Scope, x T) bool {
	return q.c.Complete(s, x)
}

// Fail settles x, taken under s, as failed before s closes: x goes back to
// its original position and its failed attempts grow by one. It reports
// whether it did anything, as Complete does.
func (q *Queue[T]) Fail(s *scope.Scope, x T) bool {
	return q.c.Fail(s, x)
}

// Close closes the queue: later adds are refused (Add reports false, TryAdd
// and AddWait return ErrClosed), and takers drain what is queued, then get
// ErrClosed. Items in progress settle as usual; a failed scope still puts its
// items back, for a later Take. Close is idempotent.
func (q *Queue[T]) Close() { q.c.Close() }

// Drain closes the queue and waits until nothing is queued or in progress:
// takers have drained it and every scope has settled. It returns ctx's error
// if ctx is done first.
func (q *Queue[T]) Drain(ctx context.Context) error {
	return q.c.Drain(ctx)
}

// Len returns the number of queued items, not counting those in progress.
func (q *Queue[T]) Len() int {
	return q.c.Len()
}

// Stats returns the queue's counters.
func (q *Queue[T]) Stats() Stats {
	return Stats(q.c.Stats())
}

// Queued returns the queued items in the order Take would return them.
func (q *Queue[T]) Queued() []T {
	return q.c.Queued()
}

// InProgress returns the items in progress, in their original queue order.
func (q *Queue[T]) InProgress() []T {
	return q.c.InProgress()
}

// Info describes x, or reports false if the queue does not hold it or x
// cannot be a key (see Add). It costs O(1), or O(r) for an item among the r
// that failed scopes put back.
func (q *Queue[T]) Info(x T) (Info, bool) {
	i, ok := q.c.Info(x)
	return Info{
		State:      State(i.State),
		EnqueuedAt: i.EnqueuedAt,
		TakenAt:    i.TakenAt,
		Attempts:   i.Attempts,
		Collisions: i.Collisions,
	}, ok
}
