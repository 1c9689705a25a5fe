package distinct

import (
	"cmp"
	"maps"
	"slices"
	"time"
)

// State says where an item is.
type State uint8

const (
	// Absent means the queue does not hold the item.
	Absent State = iota
	// Queued means the item waits to be taken.
	Queued
	// InProgress means the item was taken and its scope has not settled it.
	InProgress
)

// String returns "absent", "queued" or "in progress".
func (s State) String() string {
	switch s {
	case Queued:
		return "queued"
	case InProgress:
		return "in progress"
	}
	return "absent"
}

// Info describes one item the queue holds.
type Info struct {
	// State is Queued or InProgress.
	State State
	// EnqueuedAt is when the item was added (for an item put back by a failed
	// scope, when it was first added). It may be up to a microsecond early
	// for items added faster than one per microsecond. It is zero unless
	// Config.Timestamps.
	EnqueuedAt time.Time
	// TakenAt is when the item was taken; zero unless it is in progress and
	// Config.Timestamps.
	TakenAt time.Time
	// Attempts counts the scopes that failed with the item.
	Attempts int
	// Collisions counts the adds of the item rejected, or under Config.Rerun
	// deferred, because it was queued or in progress.
	Collisions int
}

// Stats are a queue's counters since it was made.
type Stats struct {
	// Queued and InProgress are the numbers of items queued and in progress.
	Queued, InProgress int
	// Added counts adds that queued an item, or under Config.Rerun scheduled
	// an in-progress item to run again.
	Added uint64
	// Rejected counts adds refused because the item was queued or in
	// progress (not those refused because the queue was full or closed).
	Rejected uint64
	// Completed counts items removed by a successful settlement.
	Completed uint64
	// Requeued counts items put back by a failed settlement.
	Requeued uint64
	// Removed counts items removed by Remove.
	Removed uint64
}

// Len returns the number of queued items, not counting those in progress.
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.queued.len()
}

// Stats returns the queue's counters.
func (q *Queue[T]) Stats() Stats {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := q.stats
	s.Queued, s.InProgress = q.queued.len(), q.inProgress.len()
	return s
}

// Queued returns the queued items in the order Take would return them.
func (q *Queue[T]) Queued() []T {
	q.rlock()
	defer q.runlock()
	out := make([]T, 0, q.queued.len())
	q.walkLocked(func(x T, _ uint64, _ int64, _ uint32, _ bool) bool {
		out = append(out, x)
		return true
	})
	return out
}

// InProgress returns the items in progress, in their original queue order.
func (q *Queue[T]) InProgress() []T {
	q.rlock()
	defer q.runlock()
	type item struct {
		x   T
		pos uint64
	}
	items := make([]item, 0, q.inProgress.len())
	q.inProgress.all(func(x T, s *slot[T]) bool {
		items = append(items, item{x, s.b.flights[s.i].pos})
		return true
	})
	slices.SortFunc(items, func(a, b item) int { return cmp.Compare(a.pos, b.pos) })
	out := make([]T, len(items))
	for i, it := range items {
		out[i] = it.x
	}
	return out
}

// Info describes x, or reports false if the queue does not hold it. It costs
// O(1) for an item in progress and O(p) for a queued item at position p.
func (q *Queue[T]) Info(x T) (Info, bool) {
	q.rlock()
	defer q.runlock()
	h := hash(x)
	if s := q.inProgress.get(x, h); s != nil {
		f := s.b.flights[s.i]
		return Info{
			State:      InProgress,
			EnqueuedAt: q.time(f.at),
			TakenAt:    q.time(s.b.takenAt),
			Attempts:   int(f.attempts),
			Collisions: int(f.collisions),
		}, true
	}
	collisions := q.queued.get(x, h)
	if collisions == nil {
		return Info{}, false
	}
	info := Info{State: Queued, Collisions: int(*collisions)}
	q.walkLocked(func(y T, _ uint64, at int64, attempts uint32, _ bool) bool {
		if y != x {
			return true
		}
		info.EnqueuedAt, info.Attempts = q.time(at), int(attempts)
		return false
	})
	return info, true
}

// walkLocked calls yield for each queued item in order, with its position,
// enqueue time, failed attempts and whether a failed scope put it back,
// until yield returns false. It needs either side of the gate.
func (q *Queue[T]) walkLocked(yield func(x T, pos uint64, at int64, attempts uint32, retried bool) bool) {
	var stale map[T]int // stale slots not reached yet
	if q.nstale > 0 {
		stale = maps.Clone(q.stale)
	}
	live := func(x T) bool {
		if n := stale[x]; n > 0 {
			stale[x] = n - 1
			return false
		}
		return true
	}
	retry := slices.Clone(q.retry)
	slices.SortFunc(retry, func(a, b retried[T]) int { return cmp.Compare(a.pos, b.pos) })
	for _, r := range retry {
		if live(r.x) && !yield(r.x, r.pos, r.at, r.attempts, true) {
			return
		}
	}
	st := q.stamps.s[q.stamps.head:] // empty unless Config.Timestamps
	for pos := q.fresh.head; pos < q.fresh.tail; pos++ {
		var at int64
		if len(st) > 0 {
			for len(st) > 1 && st[1].pos <= pos {
				st = st[1:]
			}
			at = st[0].at
		}
		if x := q.fresh.at(pos); live(x) && !yield(x, pos, at, 0, false) {
			return
		}
	}
}
