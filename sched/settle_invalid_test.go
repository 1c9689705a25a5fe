package sched_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/scope"
)

// A Settle refused for an invalid outcome kind changes nothing: the claim
// is still current, so the scope's close puts the entry back as a rerun.
// (It dropped the claim first: the entry stayed running for ever, with no
// take to put it back and no lease for a reaper to find, its key blocked.)
func TestRefusedSettleLeavesTheClaim(t *testing.T) {
	ctx := context.Background()
	m := sched.NewMemory[string, string]()
	if err := m.Open(sched.QueueInfo{Name: "q", Retention: sched.DefaultRetention}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	id, _, err := m.Add(ctx, sched.NewEntry[string, string]{Key: "a", Priority: 1, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	s := scope.New()
	cs, err := m.Take(ctx, s, sched.TakeRequest{Now: now, Max: 1, LeaseUntil: now.Add(time.Minute)}, nil)
	if err != nil || len(cs) != 1 {
		t.Fatalf("Take = %v, %v", cs, err)
	}
	if err := m.Start(ctx, &cs[0], now, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := m.Settle(ctx, &cs[0], sched.Outcome{Kind: sched.OutcomeKind(99), Finished: now}); !errors.Is(err, sched.ErrInvalid) {
		t.Fatalf("Settle of kind 99 = %v, want ErrInvalid", err)
	}
	if exp, _ := m.Expired(ctx, now.Add(time.Hour), nil); len(exp) != 1 {
		t.Errorf("Expired after the lease = %d claims, want the running one", len(exp))
	}
	_ = s.Close(scope.Succeeded())
	e, err := m.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if e.State != sched.StatePending {
		c, _ := m.Counts(ctx)
		t.Errorf("after its scope closed the entry is %v (counts %+v), want pending again: its claim was never settled", e.State, c)
	}
}
