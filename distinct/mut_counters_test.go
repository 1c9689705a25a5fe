package distinct_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"testing"
	"testing/synctest"
	"time"
	"weak"

	"github.com/jobkit/jobkit/distinct"
	"github.com/jobkit/jobkit/scope"
)

// Compacting the holes Remove leaves renumbers the queued items, and must
// keep what Info reports of them: their order and their collisions.
func TestCompactionKeepsCollisions(t *testing.T) {
	q := newQueue[int](t, distinct.Config{})
	const n = 200
	for i := range n {
		q.Add(i)
	}
	q.Add(n - 1) // a collision of a queued item
	q.Add(n - 1) // and another
	// Holes outnumber the queued items (and are at least 64) after 101
	// removes: Remove compacts.
	for i := range n/2 + 1 {
		if !q.Remove(i) {
			t.Fatalf("Remove(%d) = false", i)
		}
	}
	info, ok := q.Info(n - 1)
	if !ok || info.State != distinct.Queued || info.Collisions != 2 {
		t.Errorf("Info(%d) after compaction = %+v, %v; want queued with 2 collisions", n-1, info, ok)
	}
	want := make([]int, 0, n)
	for i := n/2 + 1; i < n; i++ {
		want = append(want, i)
	}
	if got := q.Queued(); !slices.Equal(got, want) {
		t.Errorf("Queued after compaction = %v, want %v", got, want)
	}
}

// A Take whose scope closes while it waits for items undoes its take: the
// item goes back as if never taken, so it counts no failed attempt and no
// requeue.
func TestUndoneTakeCountsNoAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue[int](t, distinct.Config{})
		s := scope.New()
		res := make(chan error, 1)
		go func() { _, err := q.Take(context.Background(), s, 1); res <- err }()
		synctest.Wait() // Take waits for items, under an open scope

		s.Close(scope.Succeeded())
		q.Add(1) // wakes Take, which takes 1 and finds its scope closed
		if err := <-res; !errors.Is(err, scope.ErrClosed) {
			t.Fatalf("Take whose scope closed while it waited = %v, want scope.ErrClosed", err)
		}
		info, ok := q.Info(1)
		if !ok || info.State != distinct.Queued || info.Attempts != 0 {
			t.Errorf("Info(1) after an undone take = %+v, %v; want queued with 0 attempts", info, ok)
		}
		if st := q.Stats(); st.Requeued != 0 || st.Queued != 1 || st.InProgress != 0 {
			t.Errorf("Stats after an undone take = %+v; want Requeued 0, Queued 1", st)
		}
	})
}

// Once a Take's scope has closed and its batch is settled, the queue keeps
// nothing of the scope: a settled batch kept for reuse must not pin the
// scope (and, for a scope from scope.New or Run, its 16 KiB block).
func TestSettledBatchDoesNotKeepItsScope(t *testing.T) {
	q := newQueue[int](t, distinct.Config{})
	q.Add(1)
	s := new(scope.Scope) // its own allocation, not carved from a block
	w := weak.Make(s)
	if _, err := q.Take(context.Background(), s, 1); err != nil {
		t.Fatal(err)
	}
	s.Close(scope.Succeeded())
	s = nil
	runtime.GC()
	runtime.GC()
	if w.Value() != nil {
		t.Error("the queue keeps the scope of a settled Take reachable")
	}
	runtime.KeepAlive(q)
}

// The enqueue time of an item that had a time checkpoint of its own stays
// its own once it is taken.
func TestTakenItemKeepsItsEnqueueTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue[int](t, distinct.Config{Timestamps: true})
		t0 := time.Now()
		q.Add(1)
		time.Sleep(time.Second) // fake time: advances the bubble's clock
		q.Add(2)
		s := scope.New()
		if items, err := q.Take(context.Background(), s, 2); err != nil || len(items) != 2 {
			t.Fatalf("Take = %v, %v", items, err)
		}
		for x, want := range map[int]time.Time{1: t0, 2: t0.Add(time.Second)} {
			if info, ok := q.Info(x); !ok || !info.EnqueuedAt.Equal(want) {
				t.Errorf("Info(%d) in progress = %+v, %v; want EnqueuedAt %v", x, info, ok, want)
			}
		}
		s.Close(scope.Succeeded())
	})
}

// Under Rerun, an item added again while in progress is queued once more
// when its scope succeeds; that success still counts as a completion, so
// that the counters balance: every add is completed, removed, or still held.
func TestRerunCompletionIsCounted(t *testing.T) {
	q := newQueue[int](t, distinct.Config{Rerun: true})
	q.Add(1)
	s := scope.New()
	if _, err := q.Take(context.Background(), s, 1); err != nil {
		t.Fatal(err)
	}
	q.Add(1) // runs once more
	s.Close(scope.Succeeded())
	st := q.Stats()
	if st.Added != 2 || st.Completed != 1 || st.Queued != 1 || st.InProgress != 0 {
		t.Errorf("Stats after a rerun completion = %+v; want Added 2, Completed 1, Queued 1", st)
	}
	if held := uint64(st.Queued + st.InProgress); st.Added != st.Completed+st.Removed+held {
		t.Errorf("Stats do not balance: Added %d != Completed %d + Removed %d + held %d", st.Added, st.Completed, st.Removed, held)
	}
}
