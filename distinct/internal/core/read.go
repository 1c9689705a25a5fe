package core

import (
	"cmp"
	"slices"
	"time"
)

// State is distinct.State.
type State uint8

// The states of an item.
const (
	Absent State = iota
	Queued
	InProgress
)

// Info is distinct.Info.
type Info struct {
	State      State
	EnqueuedAt time.Time
	TakenAt    time.Time
	Attempts   int
	Collisions int
}

// Stats is distinct.Stats; the two have the same fields.
type Stats struct {
	Queued, InProgress int
	Added              uint64
	Rejected           uint64
	Invalid            uint64
	Completed          uint64
	Requeued           uint64
	Removed            uint64
}

// Len returns the number of queued items, not counting those in progress.
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.queuedN
}

// Stats returns the queue's counters.
func (q *Queue[T]) Stats() Stats {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := q.stats
	s.Queued, s.InProgress = q.queuedN, q.takenN
	return s
}

// Queued returns the queued items in the order Take would return them.
func (q *Queue[T]) Queued() []T {
	q.rlock()
	defer q.runlock()
	out := make([]T, 0, q.queuedN)
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
	items := make([]item, 0, q.takenN)
	q.items.all(func(x T, l *loc) bool {
		if l.taken() {
			items = append(items, item{x, q.flights.at(l.flightIndex()).pos})
		}
		return true
	})
	slices.SortFunc(items, func(a, b item) int { return cmp.Compare(a.pos, b.pos) })
	out := make([]T, len(items))
	for i, it := range items {
		out[i] = it.x
	}
	return out
}

// Info describes x, or reports false if the queue does not hold it or x
// cannot be a key (see Add). It costs O(1), or O(r) for an item among the r
// that failed scopes put back.
func (q *Queue[T]) Info(x T) (Info, bool) {
	h, ok := q.hash(x)
	if !ok {
		return Info{}, false
	}
	q.rlock()
	defer q.runlock()
	e := q.items.get(x, h)
	if e == nil {
		return Info{}, false
	}
	if e.taken() {
		f := q.flights.at(e.flightIndex())
		return Info{
			State:      InProgress,
			EnqueuedAt: q.time(f.at),
			TakenAt:    q.time(f.b.takenAt),
			Attempts:   int(f.attempts),
			Collisions: int(f.collisions),
		}, true
	}
	info := Info{State: Queued, Collisions: int(e.collisions())}
	if pos, ok := q.freshPos(x, e.pos32()); ok {
		if q.timestamps {
			info.EnqueuedAt = q.time(q.stamps.at(pos))
		}
		return info, true
	}
	for _, r := range q.retry {
		if r.x == x {
			info.EnqueuedAt, info.Attempts = q.time(r.at), int(r.attempts)
			break
		}
	}
	return info, true
}

// walkLocked calls yield for each queued item in order, with its position,
// enqueue time, failed attempts and whether a failed scope put it back,
// until yield returns false. It needs either side of the gate.
func (q *Queue[T]) walkLocked(yield func(x T, pos uint64, at int64, attempts uint32, retried bool) bool) {
	retry := slices.Clone(q.retry)
	slices.SortFunc(retry, func(a, b retried[T]) int { return cmp.Compare(a.pos, b.pos) })
	for _, r := range retry {
		if !yield(r.x, r.pos, r.at, r.attempts, true) {
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
		if _, hole := q.holes[pos]; hole {
			continue
		}
		if !yield(q.fresh.at(pos), pos, at, 0, false) {
			return
		}
	}
}
