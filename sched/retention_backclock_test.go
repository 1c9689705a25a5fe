package sched_test

import (
	"context"
	"testing"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/scope"
)

// A clock that goes back (a wall clock stepped back an hour) between two
// runs: the entry that finished second has the earlier finish time. Each
// entry is kept for its retention after its own finish: the second one
// expires a minute after it finished, not only once the first one does
// (an hour later), and Expire says when the next one ends.
func TestRetentionAfterTheClockWentBack(t *testing.T) {
	ctx := context.Background()
	m := sched.NewMemory[string, string]()
	if err := m.Open(sched.QueueInfo{Name: "q", Retention: sched.Retention{Succeeded: time.Minute, MaxSucceeded: 100}}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	run := func(key string, at time.Time) sched.ID {
		id, _, err := m.Add(ctx, sched.NewEntry[string, string]{Key: key, Priority: 1, Now: at})
		if err != nil {
			t.Fatal(err)
		}
		s := scope.New()
		cs, err := m.Take(ctx, s, sched.TakeRequest{Now: at, Max: 1}, nil)
		if err != nil || len(cs) != 1 {
			t.Fatalf("Take = %v, %v", cs, err)
		}
		if err := m.Start(ctx, &cs[0], at, time.Time{}); err != nil {
			t.Fatal(err)
		}
		if err := m.Settle(ctx, &cs[0], sched.Outcome{Kind: sched.OutcomeSucceeded, Finished: at}); err != nil {
			t.Fatal(err)
		}
		_ = s.Close(scope.Succeeded())
		return id
	}
	run("a", t0)
	back := t0.Add(-time.Hour) // the clock went back an hour
	b := run("b", back)
	next, ok, err := m.Expire(ctx, back.Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Get(ctx, b); err == nil {
		t.Errorf("b, finished at %v with a retention of a minute, is still kept at %v (Expire's next: %v, %v)",
			back.Format(time.TimeOnly), back.Add(2*time.Minute).Format(time.TimeOnly), next.UTC().Format(time.TimeOnly), ok)
	}
}
