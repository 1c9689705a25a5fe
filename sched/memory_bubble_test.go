package sched_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/scope"
)

// A Memory used both inside a testing/synctest bubble and outside it takes
// and puts back its entries on either side: what a take holds while it
// builds its claims is tied to no bubble. (With a WaitGroup in its place,
// a Take refused inside a bubble made the next Take outside it end the
// test binary, and a scope taken into inside a bubble and closed outside
// it stranded its entry awaiting.)
func TestMemoryAcrossSynctestBubbles(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	open := func(t *testing.T) *sched.Memory[int, int] {
		m := sched.NewMemory[int, int]()
		if err := m.Open(sched.QueueInfo{Name: "q"}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := m.Add(ctx, sched.NewEntry[int, int]{Key: 1, Priority: sched.MinPriority, Now: now}); err != nil {
			t.Fatal(err)
		}
		return m
	}
	take := func(t *testing.T, m *sched.Memory[int, int], s *scope.Scope) []sched.Claim[int, int] {
		t.Helper()
		cs, err := m.Take(ctx, s, sched.TakeRequest{Now: now, Max: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	t.Run("refused inside, taken outside", func(t *testing.T) {
		m := open(t)
		synctest.Test(t, func(t *testing.T) {
			s := scope.New()
			_ = s.Close(scope.Succeeded())
			if _, err := m.Take(ctx, s, sched.TakeRequest{Now: now, Max: 1}, nil); !errors.Is(err, scope.ErrClosed) {
				t.Fatalf("Take on a closed scope = %v, want scope.ErrClosed", err)
			}
		})
		s := scope.New()
		if cs := take(t, m, s); len(cs) != 1 {
			t.Fatalf("took %d entries, want 1", len(cs))
		}
		_ = s.Close(scope.Succeeded())
	})
	t.Run("taken inside, put back outside", func(t *testing.T) {
		m := open(t)
		s := scope.New()
		synctest.Test(t, func(t *testing.T) {
			if cs := take(t, m, s); len(cs) != 1 {
				t.Fatalf("took %d entries, want 1", len(cs))
			}
		})
		_ = s.Close(scope.Succeeded()) // not settled: back to pending
		s2 := scope.New()
		defer s2.Close(scope.Succeeded())
		if cs := take(t, m, s2); len(cs) != 1 {
			c, _ := m.Counts(ctx)
			t.Fatalf("took %d entries after the close, want 1 (counts %+v)", len(cs), c)
		}
	})
}
