package sched

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jobkit/jobkit/scope"
)

// An Add whose key cannot be hashed (a slice in an any) or is not equal to
// itself (NaN) is refused with an error wrapping ErrInvalid, not a panic,
// and the backend stays usable. (The scheduler checks keys before; a
// backend used on its own does not.)
func TestMemoryRefusesKeysItCannotFind(t *testing.T) {
	m := NewMemory[int, any]()
	if err := m.Open(QueueInfo{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, k := range []any{[]int{1}, math.NaN(), struct{ F any }{math.NaN()}} {
		if _, added, err := m.Add(ctx, NewEntry[int, any]{Key: k, Priority: 1, Now: time.Now()}); !errors.Is(err, ErrInvalid) || added {
			t.Errorf("Add of key %v = %v, %v; want an error wrapping ErrInvalid", k, added, err)
		}
	}
	if !m.mu.TryLock() {
		t.Fatal("the backend's lock is held after the refused adds")
	}
	m.mu.Unlock()
	if _, added, err := m.Add(ctx, NewEntry[int, any]{Key: "k", Priority: 1, Now: time.Now()}); err != nil || !added {
		t.Errorf("Add after the refusals = %v, %v; want added", added, err)
	}
	if c, _ := m.Counts(ctx); c.Pending != 1 {
		t.Errorf("%d pending, want 1: a refused key was stored", c.Pending)
	}
}

// checkKeyed fails t unless m's key index holds exactly its keyed entries,
// each where a probe for its key finds it, and every live entry is keyed.
// It runs under m.mu.
func checkKeyed[T any](t *testing.T, m *Memory[T, int]) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	keyed := 0
	for _, e := range m.order.s {
		if e == nil {
			continue
		}
		if e.state.Live() && !e.keyed {
			t.Fatalf("live entry %d (%v) is not keyed", e.id, e.state)
		}
		if !e.keyed {
			continue
		}
		keyed++
		if h, _ := m.byKey.hash(e.key); h != e.khash {
			t.Fatalf("entry %d keeps hash %x, its key hashes %x", e.id, e.khash, h)
		}
		if got, _ := m.byKey.find(e.key, e.khash); got != e {
			t.Fatalf("key %d finds %p, want entry %d", e.key, got, e.id)
		}
	}
	if m.byKey.n != keyed {
		t.Fatalf("%d keys in the index, %d keyed entries", m.byKey.n, keyed)
	}
	for _, s := range m.byKey.slots {
		if s.e != nil && (s.e.state == 0 || !s.e.keyed) {
			t.Fatalf("the index holds entry %d, deleted or not keyed", s.e.id)
		}
	}
}

// Random adds (delayed, disabled, grouped, of keys that repeat), takes,
// starts, settlements of every outcome, scope closes, deletes, retries,
// expiries, promotions and disables, with and without BlockFailed and
// retention: after every step the key index holds exactly the keyed
// entries, and every live entry is keyed.
func TestMemoryKeyIndexFollowsTheEntries(t *testing.T) {
	t.Parallel()
	kinds := []OutcomeKind{OutcomeSucceeded, OutcomeFailed, OutcomeCancelled, OutcomePoisoned, OutcomeRetry, OutcomeSnooze, OutcomeRerun}
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, seed))
		ctx := context.Background()
		keepNone := r.IntN(3) == 0
		grouped := r.IntN(3) == 0
		m := modelMemory(t, keepNone, r.IntN(2) == 0, grouped)
		now := time.Unix(1000, 0)
		type open struct {
			s  *scope.Scope
			cs []Claim[int, int]
		}
		var opens []open
		for range 2000 {
			now = now.Add(time.Second)
			switch r.IntN(10) {
			case 0, 1, 2:
				a := NewEntry[int, int]{Key: r.IntN(60), Priority: 1 + r.IntN(3), Now: now, RunAt: now, Disabled: r.IntN(10) == 0}
				if grouped && r.IntN(3) == 0 {
					a.Group = []string{"a", "b"}[r.IntN(2)]
				}
				if r.IntN(4) == 0 {
					a.RunAt = now.Add(time.Duration(r.IntN(5)) * time.Second)
				}
				if _, _, err := m.Add(ctx, a); err != nil {
					t.Fatal(err)
				}
			case 3:
				s := scope.New()
				cs, err := m.Take(ctx, s, TakeRequest{Now: now, Max: 1 + r.IntN(5)}, nil)
				if err != nil {
					t.Fatal(err)
				}
				opens = append(opens, open{s, cs})
			case 4, 5:
				if len(opens) == 0 {
					continue
				}
				i := r.IntN(len(opens))
				o := opens[i]
				for j := range o.cs {
					if r.IntN(3) == 0 {
						continue
					}
					_ = m.Start(ctx, &o.cs[j], now, time.Time{})
					_ = m.Settle(ctx, &o.cs[j], Outcome{Kind: kinds[r.IntN(len(kinds))], Finished: now, At: now.Add(2 * time.Second)})
				}
				if r.IntN(2) == 0 {
					exit := scope.Succeeded()
					if r.IntN(2) == 0 {
						exit = scope.Failed(nil)
					}
					_ = o.s.Close(exit)
					opens = append(opens[:i], opens[i+1:]...)
				}
			case 6:
				var f Filter[int, int]
				if r.IntN(2) == 0 {
					f.States = []State{[]State{StateSucceeded, StateFailed, StateCancelled, StatePoisoned, StatePending, StateDelayed}[r.IntN(6)]}
				}
				_, _ = m.Delete(ctx, f)
			case 7:
				_, _ = m.Retry(ctx, Filter[int, int]{}, r.IntN(2) == 0, now)
			case 8:
				_, _, _ = m.Expire(ctx, now.Add(time.Duration(r.IntN(4000))*time.Second))
			case 9:
				_, _, _ = m.Promote(ctx, now)
				m.mu.Lock()
				var ids []ID
				for _, e := range m.order.s {
					if e != nil {
						ids = append(ids, e.id)
					}
				}
				m.mu.Unlock()
				if len(ids) > 0 {
					_ = m.SetDisabled(ctx, ids[r.IntN(len(ids))], r.IntN(2) == 0)
				}
			}
			checkKeyed(t, m)
		}
		for _, o := range opens {
			_ = o.s.Close(scope.Succeeded())
		}
		checkKeyed(t, m)
	}
}

// An entry with a group in a queue not opened as Grouped is refused, not
// stored where a take would trip on it.
func TestMemoryRefusesAGroupInAnUngroupedQueue(t *testing.T) {
	m := NewMemory[int, int]()
	if err := m.Open(QueueInfo{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, added, err := m.Add(ctx, NewEntry[int, int]{Key: 1, Priority: 1, Group: "g", Now: time.Now()}); !errors.Is(err, ErrInvalid) || added {
		t.Errorf("Add with a group = %v, %v; want an error wrapping ErrInvalid", added, err)
	}
	if cs, err := m.Take(ctx, scope.New(), TakeRequest{Now: time.Now(), Max: 4}, nil); err != nil || len(cs) != 0 {
		t.Errorf("Take = %d claims, %v; want none", len(cs), err)
	}
}
