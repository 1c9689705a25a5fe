package sched

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"time"
)

// pageSize is how many entries List copies under the lock at a time, and
// scanSize how many it looks at: a filter that few entries pass does not
// hold the lock across the whole queue.
const (
	pageSize = 256
	scanSize = 4 * pageSize
)

// entry returns a snapshot of e, with its payload if payload.
func (m *Memory[T, K]) entry(e *mentry[T, K], payload bool) Entry[T, K] {
	x := Entry[T, K]{
		ID: e.id, Queue: m.info.Name, Key: e.key, State: e.state, Disabled: e.disabled,
		Priority: e.priority, EnqueuedAt: m.clock.timeOrZero(e.enqueued), RunAt: m.clock.timeOrZero(e.runAt),
		StartedAt: m.clock.timeOrZero(e.started), FinishedAt: m.clock.timeOrZero(e.finished),
		Attempts: e.attempts, Reruns: e.reruns, Rescues: e.rescues, Snoozes: e.snoozes, Gen: e.gen, Progress: e.progress,
	}
	if payload {
		x.Payload = e.payload
	}
	if e.group != nil {
		x.Group = e.group.name
	}
	if len(e.errs) > 0 {
		x.Errors = slices.Clone(e.errs)
	}
	return x
}

// Get implements Backend.
func (m *Memory[T, K]) Get(ctx context.Context, id ID) (Entry[T, K], error) {
	if err := checkCtx(ctx); err != nil {
		return Entry[T, K]{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.byID(id)
	if e == nil {
		return Entry[T, K]{}, ErrNotFound
	}
	return m.entry(e, true), nil
}

// matches reports whether e passes the parts of f that need no payload and
// run no code of the caller's but Key, under m.mu.
func (m *Memory[T, K]) matches(f *Filter[T, K], e *mentry[T, K]) bool {
	if len(f.States) > 0 && !slices.Contains(f.States, e.state) {
		return false
	}
	if !f.From.IsZero() && e.enqueued < m.clock.ns(f.From) {
		return false
	}
	if !f.To.IsZero() && e.enqueued >= m.clock.ns(f.To) {
		return false
	}
	return true
}

// page copies up to pageSize entries with IDs above after that pass f's
// cheap tests into buf, looking at most at scanSize entries, and returns it,
// the ID of the last entry it looked at (where the next page starts) and
// whether more entries may follow. f.Key and f.Match run later, outside the
// lock.
func (m *Memory[T, K]) page(f *Filter[T, K], after ID, buf []Entry[T, K]) ([]Entry[T, K], ID, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o := &m.order
	start := o.after(after)
	for i := start; i < len(o.s); i++ {
		if f.Until != 0 && o.ids[i] > f.Until {
			return buf, after, false
		}
		after = o.ids[i]
		if e := o.s[i]; e != nil && m.matches(f, e) {
			buf = append(buf, m.entry(e, f.Payloads))
		}
		if len(buf) == pageSize || i+1-start == scanSize {
			return buf, after, i+1 < len(o.s)
		}
	}
	return buf, after, false
}

// accepts runs the caller's parts of f on x.
func (f *Filter[T, K]) accepts(x *Entry[T, K]) bool {
	return (f.Key == nil || f.Key(x.Key)) && (f.Match == nil || f.Match(x))
}

// List implements Backend. It copies entries a page at a time under the
// lock and runs f.Key and f.Match outside it, so they may call the queue.
func (m *Memory[T, K]) List(ctx context.Context, f Filter[T, K]) iter.Seq2[Entry[T, K], error] {
	return func(yield func(Entry[T, K], error) bool) {
		buf := make([]Entry[T, K], 0, pageSize)
		after := f.After
		for {
			if err := checkCtx(ctx); err != nil {
				yield(Entry[T, K]{}, err)
				return
			}
			var more bool
			buf, after, more = m.page(&f, after, buf[:0])
			for i := range buf {
				if f.accepts(&buf[i]) && !yield(buf[i], nil) {
					return
				}
			}
			clear(buf)
			if !more {
				return
			}
		}
	}
}

// each calls do, under the lock, for every entry that matches f, a page at
// a time, and returns how many do reported true for.
func (m *Memory[T, K]) each(ctx context.Context, f Filter[T, K], do func(e *mentry[T, K]) bool) (int, error) {
	n := 0
	for x, err := range m.List(ctx, Filter[T, K]{States: f.States, From: f.From, To: f.To, After: f.After, Until: f.Until, Payloads: f.Match != nil, Key: f.Key, Match: f.Match}) {
		if err != nil {
			return n, err
		}
		m.mu.Lock()
		e := m.byID(x.ID)
		if e != nil && m.matches(&f, e) && do(e) {
			n++
		}
		m.mu.Unlock()
	}
	return n, nil
}

// Delete implements Backend.
func (m *Memory[T, K]) Delete(ctx context.Context, f Filter[T, K]) (int, error) {
	return m.each(ctx, f, func(e *mentry[T, K]) bool {
		if e.state == StateAwaiting || e.state == StateRunning {
			return false
		}
		m.counts.Deleted++
		m.delete(e)
		return true
	})
}

// Retry implements Backend. An entry whose key has been taken by a live
// entry meanwhile is left as it is.
func (m *Memory[T, K]) Retry(ctx context.Context, f Filter[T, K], reset bool, now time.Time) (int, error) {
	return m.each(ctx, f, func(e *mentry[T, K]) bool {
		if !e.state.Final() {
			return false
		}
		if !e.keyed {
			old, slot := m.byKey.lookup(e.key, e.khash)
			if old != nil {
				return false // taken
			}
			m.byKey.insert(slot, e.khash, e)
		}
		l, _, _ := m.retention(e.state)
		m.retained[l].remove(e)
		if reset {
			e.attempts, e.reruns, e.rescues, e.snoozes = 0, 0, 0, 0
		}
		e.ready = max(m.clock.ns(now), e.finished) // not before its run ended: a Clock may go back
		e.finished = 0
		m.setState(e, StatePending)
		m.enqueue(e)
		return true
	})
}

var _ Backend[int, int] = (*Memory[int, int])(nil)

// String describes the backend.
func (m *Memory[T, K]) String() string { return fmt.Sprintf("memory(%s)", m.info.Name) }
