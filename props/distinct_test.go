package props

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/jobkit/jobkit/distinct"
	"github.com/jobkit/jobkit/scope"
)

// model is the reference for distinct.Queue: a list of queued items kept
// sorted by position, and the in-progress items with their positions.
type model struct {
	capacity int
	rerun    bool
	closed   bool
	next     int // the position the next fresh item gets
	queued   []entry
	held     map[int]*heldEntry
	stats    distinct.Stats
	counts   map[int]*itemCounts // of queued and in-progress items
}

type entry struct{ x, pos int }

type heldEntry struct {
	entry
	owner int // the batch that holds it
	dirty bool
}

type itemCounts struct{ attempts, collisions int }

func (m *model) add(x int) (bool, error) {
	if m.closed {
		return false, distinct.ErrClosed
	}
	if slices.ContainsFunc(m.queued, func(e entry) bool { return e.x == x }) {
		m.counts[x].collisions++
		m.stats.Rejected++
		return false, nil
	}
	if h, ok := m.held[x]; ok {
		m.counts[x].collisions++
		if m.rerun && !h.dirty {
			h.dirty = true
			m.stats.Added++
			return true, nil
		}
		m.stats.Rejected++
		return false, nil
	}
	if m.capacity > 0 && len(m.queued)+len(m.held) >= m.capacity {
		return false, distinct.ErrFull
	}
	m.push(x)
	m.stats.Added++
	return true, nil
}

func (m *model) push(x int) {
	m.queued = append(m.queued, entry{x, m.next})
	m.next++
	m.counts[x] = &itemCounts{}
}

func (m *model) take(max, owner int) []int {
	n := min(max, len(m.queued))
	var out []int
	for _, e := range m.queued[:n] {
		m.held[e.x] = &heldEntry{entry: e, owner: owner}
		out = append(out, e.x)
	}
	m.queued = slices.Delete(m.queued, 0, n)
	return out
}

func (m *model) settle(x int, ok bool) {
	h := m.held[x]
	delete(m.held, x)
	if ok {
		m.stats.Completed++
		delete(m.counts, x)
		if h.dirty {
			m.push(x)
		}
		return
	}
	m.stats.Requeued++
	m.counts[x].attempts++
	i, _ := slices.BinarySearchFunc(m.queued, h.pos, func(e entry, pos int) int { return cmp.Compare(e.pos, pos) })
	m.queued = slices.Insert(m.queued, i, h.entry)
}

func (m *model) items() []int {
	out := []int{}
	for _, e := range m.queued {
		out = append(out, e.x)
	}
	return out
}

func (m *model) heldItems() []int {
	hs := make([]*heldEntry, 0, len(m.held))
	for _, h := range m.held {
		hs = append(hs, h)
	}
	slices.SortFunc(hs, func(a, b *heldEntry) int { return cmp.Compare(a.pos, b.pos) })
	out := []int{}
	for _, h := range hs {
		out = append(out, h.x)
	}
	return out
}

var errFail = errors.New("fail")

// batchUnderTest is one open Take: the real scope and the model's batch id.
type batchUnderTest struct {
	id    int
	s     *scope.Scope
	items []int
}

func TestDistinctMatchesModel(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		cfg := distinct.Config{
			Capacity: rapid.SampledFrom([]int{0, 0, 3, 8}).Draw(t, "capacity"),
			Rerun:    rapid.Bool().Draw(t, "rerun"),
			// Timestamps change no observable result but the times: run
			// both ways so its code paths see every operation.
			Timestamps: rapid.Bool().Draw(t, "timestamps"),
		}
		q, err := distinct.New[int](cfg)
		if err != nil {
			t.Fatal(err)
		}
		m := &model{capacity: cfg.Capacity, rerun: cfg.Rerun, held: map[int]*heldEntry{}, counts: map[int]*itemCounts{}}
		var open []*batchUnderTest
		var closedScopes []*scope.Scope
		nextBatch := 0
		item := rapid.IntRange(0, 11)
		cancelled, cancel := context.WithCancel(context.Background())
		cancel()
		ctx := context.Background()

		takeBatch := func(t *rapid.T, max int) {
			// Take would block on an empty, open queue: use a cancelled
			// context and require that nothing changes.
			if len(m.queued) == 0 {
				_, err := q.Take(cancelled, scope.New(), max)
				want := error(context.Canceled)
				if m.closed {
					want = distinct.ErrClosed
				}
				if !errors.Is(err, want) {
					t.Fatalf("Take on empty queue = %v, want %v", err, want)
				}
				return
			}
			s := scope.New()
			got, err := q.Take(ctx, s, max)
			if err != nil {
				t.Fatalf("Take: %v", err)
			}
			want := m.take(max, nextBatch)
			if !slices.Equal(got, want) {
				t.Fatalf("Take(%d) = %v, want %v", max, got, want)
			}
			open = append(open, &batchUnderTest{id: nextBatch, s: s, items: got})
			nextBatch++
		}
		pickBatch := func(t *rapid.T) (int, *batchUnderTest) {
			if len(open) == 0 {
				t.Skip("no open batch")
			}
			i := rapid.IntRange(0, len(open)-1).Draw(t, "batch")
			return i, open[i]
		}

		t.Repeat(map[string]func(*rapid.T){
			"Add": func(t *rapid.T) {
				x := item.Draw(t, "x")
				got, gerr := q.TryAdd(x)
				want, werr := m.add(x)
				if got != want || !errors.Is(gerr, werr) || (werr == nil) != (gerr == nil) {
					t.Fatalf("TryAdd(%d) = %v, %v; want %v, %v", x, got, gerr, want, werr)
				}
			},
			"AddAll": func(t *rapid.T) {
				xs := rapid.SliceOfN(item, 0, 5).Draw(t, "xs")
				var want []int
				for _, x := range xs {
					if ok, _ := m.add(x); !ok {
						want = append(want, x)
					}
				}
				if got := q.AddAll(xs); !slices.Equal(got, want) {
					t.Fatalf("AddAll(%v) = %v, want %v", xs, got, want)
				}
			},
			"Take": func(t *rapid.T) {
				takeBatch(t, rapid.IntRange(1, 4).Draw(t, "max"))
			},
			"Process": func(t *rapid.T) {
				if len(m.queued) == 0 {
					t.Skip("Process would block")
				}
				max := rapid.IntRange(1, 4).Draw(t, "max")
				ok := rapid.Bool().Draw(t, "ok")
				want := m.take(max, -1)
				err := q.Process(ctx, max, func(_ context.Context, got []int) error {
					if !slices.Equal(got, want) {
						return fmt.Errorf("Process got %v, want %v", got, want)
					}
					if !ok {
						return errors.New("fail")
					}
					return nil
				})
				if (err == nil) != ok {
					t.Fatalf("Process: %v", err)
				}
				for _, x := range want {
					m.settle(x, ok)
				}
			},
			"Work": func(t *rapid.T) {
				// Work runs until f fails (on call failAt, if any), the
				// queue is closed and drained, or its context is done. f
				// cancels the context once the queue would be empty and
				// open, where Work would otherwise wait; on an empty open
				// queue Work gets a cancelled context at once.
				max := rapid.IntRange(1, 4).Draw(t, "max")
				failAt := rapid.IntRange(-1, 3).Draw(t, "failAt")
				wctx, wcancel := context.WithCancel(ctx)
				defer wcancel()
				if len(m.queued) == 0 && !m.closed {
					wcancel()
				}
				var last []int // the model's batch of the latest call
				calls, failed := 0, false
				err := q.Work(wctx, max, func(_ context.Context, got []int) error {
					for _, x := range last {
						m.settle(x, true)
					}
					last = m.take(max, -1)
					if !slices.Equal(got, last) {
						return fmt.Errorf("Work got %v, want %v", got, last)
					}
					if calls++; calls-1 == failAt {
						failed = true
						return errFail
					}
					if len(m.queued) == 0 && !m.closed {
						wcancel()
					}
					return nil
				})
				want := error(context.Canceled)
				switch {
				case failed:
					want = errFail
				case m.closed:
					want = distinct.ErrClosed
				}
				if !errors.Is(err, want) {
					t.Fatalf("Work = %v, want %v", err, want)
				}
				for _, x := range last {
					m.settle(x, !failed)
				}
			},
			"CloseScope": func(t *rapid.T) {
				i, b := pickBatch(t)
				exit := rapid.SampledFrom([]scope.Exit{
					scope.Succeeded(),
					scope.Failed(errors.New("x")),
					scope.Panicked(&scope.PanicError{Value: "p"}),
					scope.Interrupted(context.Canceled),
				}).Draw(t, "exit")
				if err := b.s.Close(exit); err != nil {
					t.Fatalf("Close: %v", err)
				}
				for _, x := range b.items {
					if h, ok := m.held[x]; ok && h.owner == b.id {
						m.settle(x, exit.Succeeded())
					}
				}
				open = slices.Delete(open, i, i+1)
				closedScopes = append(closedScopes, b.s)
			},
			"SettleOne": func(t *rapid.T) {
				_, b := pickBatch(t)
				x := rapid.SampledFrom(b.items).Draw(t, "x")
				ok := rapid.Bool().Draw(t, "ok")
				h, held := m.held[x]
				want := held && h.owner == b.id
				var got bool
				if ok {
					got = q.Complete(b.s, x)
				} else {
					got = q.Fail(b.s, x)
				}
				if got != want {
					t.Fatalf("settle %d (ok=%v) = %v, want %v", x, ok, got, want)
				}
				if want {
					m.settle(x, ok)
				}
			},
			"RunTake": func(t *rapid.T) {
				// scope.Run around Take, as the README's second example: the
				// scope comes from a block and is kept afterwards, so that
				// SettleStale and CloseStale use it while later batches
				// reuse the queue's recycled batches and flights.
				if len(m.queued) == 0 {
					t.Skip("Take would block")
				}
				max := rapid.IntRange(1, 4).Draw(t, "max")
				early := rapid.IntRange(-1, 3).Draw(t, "early") // an item completed early
				ok := rapid.Bool().Draw(t, "ok")
				want := m.take(max, nextBatch)
				nextBatch++
				var kept *scope.Scope
				err := scope.Run(ctx, func(ctx context.Context, s *scope.Scope) error {
					kept = s
					got, err := q.TakeAppend(ctx, s, max, nil)
					if err != nil || !slices.Equal(got, want) {
						return fmt.Errorf("TakeAppend(%d) = %v, %v; want %v", max, got, err, want)
					}
					if early >= 0 && early < len(got) {
						if !q.Complete(s, got[early]) {
							return fmt.Errorf("Complete(%d) = false", got[early])
						}
						m.settle(got[early], true)
					}
					if !ok {
						return errFail
					}
					return nil
				})
				if (err == nil) != ok {
					t.Fatalf("Run: %v", err)
				}
				for i, x := range want {
					if i != early {
						m.settle(x, ok)
					}
				}
				closedScopes = append(closedScopes, kept)
			},
			"CloseStale": func(t *rapid.T) {
				if len(closedScopes) == 0 {
					t.Skip("no closed scope")
				}
				s := rapid.SampledFrom(closedScopes).Draw(t, "scope")
				if err := s.Close(scope.Failed(errFail)); err != nil {
					t.Fatalf("Close of a closed scope = %v", err)
				}
				if s.TryAdd(scope.FinalizerFunc(func(scope.Exit) error { return nil })) {
					t.Fatal("TryAdd on a closed scope reported true")
				}
				// The model does not change: the "" check sees it.
			},
			"SettleStale": func(t *rapid.T) {
				if len(closedScopes) == 0 {
					t.Skip("no closed scope")
				}
				s := rapid.SampledFrom(closedScopes).Draw(t, "scope")
				x := item.Draw(t, "x")
				if q.Complete(s, x) || q.Fail(s, x) {
					t.Fatalf("settling %d from a closed scope had an effect", x)
				}
			},
			"Remove": func(t *rapid.T) {
				x := item.Draw(t, "x")
				i := slices.IndexFunc(m.queued, func(e entry) bool { return e.x == x })
				if got := q.Remove(x); got != (i >= 0) {
					t.Fatalf("Remove(%d) = %v", x, got)
				}
				if i >= 0 {
					m.queued = slices.Delete(m.queued, i, i+1)
					delete(m.counts, x)
					m.stats.Removed++
				}
			},
			"Close": func(t *rapid.T) {
				q.Close()
				m.closed = true
			},
			"": func(t *rapid.T) {
				if got, want := q.Queued(), m.items(); !slices.Equal(got, want) {
					t.Fatalf("Queued() = %v, want %v", got, want)
				}
				if got, want := q.InProgress(), m.heldItems(); !slices.Equal(got, want) {
					t.Fatalf("InProgress() = %v, want %v", got, want)
				}
				want := m.stats
				want.Queued, want.InProgress = len(m.queued), len(m.held)
				if got := q.Stats(); got != want {
					t.Fatalf("Stats() = %+v, want %+v", got, want)
				}
				if q.Len() != len(m.queued) {
					t.Fatalf("Len() = %d, want %d", q.Len(), len(m.queued))
				}
				for x := range 12 {
					info, ok := q.Info(x)
					c, present := m.counts[x]
					if ok != present {
						t.Fatalf("Info(%d) present = %v, want %v", x, ok, present)
					}
					if !ok {
						continue
					}
					_, held := m.held[x]
					if held != (info.State == distinct.InProgress) || info.Attempts != c.attempts || info.Collisions != c.collisions {
						t.Fatalf("Info(%d) = %+v, want held %v, %+v", x, info, held, *c)
					}
				}
			},
		})
		for _, b := range open {
			b.s.Close(scope.Succeeded())
		}
	})
}
