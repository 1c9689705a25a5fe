package sched

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jobkit/jobkit/scope"
)

// TestMemoryTakeBuildsClaimsWhileScopeCloses races Take, which builds its
// claims after letting go of the lock, with a close of its scope (whose
// Finalize must wait for the claims, so that no entry is recycled and the
// take not reused under them) and with Expired, whose claims a reaper
// settles at once (Expired too waits for the claims before it reads the
// take's entries). Run it under -race.
func TestMemoryTakeBuildsClaimsWhileScopeCloses(t *testing.T) {
	ctx := context.Background()
	m := NewMemory[int, int]()
	if err := m.Open(QueueInfo{Name: "q", Retention: Retention{}}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	const batch = 64
	next := 0
	for round := range 300 {
		for range batch {
			if _, ok, err := m.Add(ctx, NewEntry[int, int]{Key: next, Payload: -next, Priority: MinPriority, Now: now}); err != nil || !ok {
				t.Fatalf("add %d: %v %v", next, ok, err)
			}
			next++
		}
		s := scope.New()
		fail := round%2 == 0
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			if fail {
				_ = s.Close(scope.Failed(errors.New("closed under the take")))
			} else {
				_ = s.Close(scope.Succeeded())
			}
		}()
		go func() {
			defer wg.Done()
			cs, err := m.Expired(ctx, now.Add(time.Hour), nil)
			if err != nil {
				t.Error(err)
			}
			for _, c := range cs {
				if c.Payload != -c.Key {
					t.Errorf("expired claim %+v", c)
				}
				if err := m.Settle(ctx, &c, Outcome{Kind: OutcomeRerun, Finished: now}); err != nil && !errors.Is(err, ErrStale) {
					t.Errorf("settle of expired claim %+v: %v", c, err)
				}
			}
		}()
		cs, err := m.Take(ctx, s, TakeRequest{Now: now, Max: batch, LeaseUntil: now.Add(time.Second)}, nil)
		wg.Wait()
		if err != nil && !errors.Is(err, scope.ErrClosed) {
			t.Fatal(err)
		}
		for _, c := range cs {
			if c.Payload != -c.Key || c.Gen == 0 || c.Priority != MinPriority || c.EnqueuedAt.IsZero() {
				t.Fatalf("round %d: claim %+v", round, c)
			}
			// The scope has closed: the claim is stale, or its entry was
			// settled with the scope.
			if err := m.Start(ctx, &c, now, time.Time{}); err == nil {
				t.Fatalf("round %d: start of a claim whose scope closed", round)
			}
		}
		n, err := m.Counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n.Awaiting != 0 || n.Running != 0 || n.Pending+n.Expired != next {
			t.Fatalf("round %d: counts %+v after %d adds", round, n, next)
		}
	}
}

// TestMemoryTakePanicLeavesNoScopeWaiting: a Take that panics once its take
// is in the scope (here on a unit without an entry, planted in a level;
// the unit of a deleted entry left in a level did that once) must let go
// of the take's building, or the scope's close, which the scheduler runs
// when it recovers the panic, waits for it forever and Stop hangs.
func TestMemoryTakePanicLeavesNoScopeWaiting(t *testing.T) {
	m := NewMemory[int, int]()
	if err := m.Open(QueueInfo{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	m.queue(&unit[int, int]{}, MinPriority)
	m.mu.Unlock()
	s := scope.New()
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Take of a unit without an entry did not panic")
			}
		}()
		_, _ = m.Take(context.Background(), s, TakeRequest{Max: 8, Now: time.Now()}, nil)
	}()
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		_ = s.Close(scope.Exit{})
	}()
	select {
	case <-closed:
	case <-time.After(10 * time.Second): // a watchdog, not a wait for something to happen
		t.Fatal("the scope's close still waits for the panicked Take's claims after 10s")
	}
}
