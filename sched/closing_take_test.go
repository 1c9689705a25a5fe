package sched_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/scope"
)

// closingTakeRounds is how many times the tests below race a batch's close
// with an operator; before the fix each failed within 60–300 rounds.
func closingTakeRounds() int {
	if testing.Short() {
		return 300
	}
	return 1000
}

// closingTake adds n entries to a new Memory, takes them all into a scope
// and closes the scope on another goroutine as a batch that started none
// of them does (at Stop, Pause or a lowered cap): its entries go back to
// pending while the test's caller acts on them. wait returns once the
// close has.
func closingTake(t *testing.T, n int) (m *sched.Memory[int, int], claims []sched.Claim[int, int], wait func()) {
	t.Helper()
	ctx, now := context.Background(), time.Now()
	m = sched.NewMemory[int, int]()
	if err := m.Open(sched.QueueInfo{Name: "q", Retention: sched.DefaultRetention}); err != nil {
		t.Fatal(err)
	}
	for k := range n {
		if _, _, err := m.Add(ctx, sched.NewEntry[int, int]{Key: k, Payload: k, Priority: 1, Now: now}); err != nil {
			t.Fatal(err)
		}
	}
	s := scope.New()
	claims, err := m.Take(ctx, s, sched.TakeRequest{Now: now, Max: n}, nil)
	if err != nil || len(claims) != n {
		t.Fatalf("take: %d claims, %v", len(claims), err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { _ = s.Close(scope.Succeeded()) })
	return m, claims, wg.Wait
}

func claimIDs(cs []sched.Claim[int, int]) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprint(&b, c.ID, " ")
	}
	return b.String()
}

// Entries deleted while the batch that held them closes are gone for good:
// none is left behind in the backend's FIFO. One was, once: deleted after
// distinct put its unit back and before the take counted it, its record
// was recycled with the unit still queued, so that a new entry reusing the
// record was never taken (lost), or a Take found the unit of the recycled
// record and panicked.
func TestMemoryDeleteWhileBatchClosesLeavesNothingBehind(t *testing.T) {
	t.Parallel()
	ctx, now := context.Background(), time.Now()
	const n = 64
	for round := range closingTakeRounds() {
		m, _, wait := closingTake(t, n)
		for deleted := 0; deleted < n; {
			d, err := m.Delete(ctx, sched.Filter[int, int]{States: []sched.State{sched.StatePending}})
			if err != nil {
				t.Fatal(err)
			}
			deleted += d
		}
		wait()
		if c, _ := m.Counts(ctx); c.Live() != 0 {
			t.Fatalf("round %d: live entries left: %+v", round, c)
		}
		for k := range n { // new entries, in the recycled records
			if _, _, err := m.Add(ctx, sched.NewEntry[int, int]{Key: 1000 + k, Payload: k, Priority: 1, Now: now}); err != nil {
				t.Fatal(err)
			}
		}
		got, err := m.Take(ctx, scope.New(), sched.TakeRequest{Now: now, Max: 2 * n}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n {
			c, _ := m.Counts(ctx)
			t.Fatalf("round %d: %d new pending entries, Take took %d (%s); counts %+v", round, n, len(got), claimIDs(got), c)
		}
	}
}

// Entries disabled while the batch that held them closes are never taken
// until enabled. They were, once, when disabled between distinct putting
// their units back and the take counting them.
func TestMemoryDisableWhileBatchClosesIsNeverTaken(t *testing.T) {
	t.Parallel()
	ctx, now := context.Background(), time.Now()
	const n = 64
	for round := range closingTakeRounds() {
		m, claims, wait := closingTake(t, n)
		disabled := map[sched.ID]bool{}
		for len(disabled) < n {
			for _, c := range claims {
				if disabled[c.ID] {
					continue
				}
				e, err := m.Get(ctx, c.ID)
				if err != nil {
					t.Fatal(err)
				}
				if e.State == sched.StatePending {
					if err := m.SetDisabled(ctx, c.ID, true); err != nil {
						t.Fatal(err)
					}
					disabled[c.ID] = true
				}
			}
		}
		wait()
		fresh, _, err := m.Add(ctx, sched.NewEntry[int, int]{Key: 1000, Payload: 0, Priority: 1, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.Take(ctx, scope.New(), sched.TakeRequest{Now: now, Max: 2 * n}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].ID != fresh {
			t.Fatalf("round %d: Take claimed %s, want only the new entry %d", round, claimIDs(got), fresh)
		}
	}
}
