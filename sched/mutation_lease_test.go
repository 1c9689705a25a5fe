package sched_test

import (
	"context"
	"testing"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/scope"
)

// Memory's Expired returns the claims whose lease ended before now, as
// Backend documents: not a lease that ends at now itself, which the reaper
// (whose now is its time less the grace) would rescue a grace too early
// by a nanosecond. (From mutation testing: Expired comparing lease ≤ now
// instead of lease < now survived every test; the conformance suite
// checks leases only well before and well after their end.)
func TestMemoryExpiredExcludesALeaseEndingNow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := sched.NewMemory[int, int]()
	if err := m.Open(sched.QueueInfo{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, ok, err := m.Add(ctx, sched.NewEntry[int, int]{Key: 1, Payload: 1, Priority: sched.MinPriority, Now: now}); err != nil || !ok {
		t.Fatalf("Add = %v, %v", ok, err)
	}
	s := scope.New()
	defer s.Close(scope.Succeeded())
	until := now.Add(time.Minute)
	cs, err := m.Take(ctx, s, sched.TakeRequest{Now: now, Max: 1, LeaseUntil: until}, nil)
	if err != nil || len(cs) != 1 {
		t.Fatalf("Take = %d claims, %v", len(cs), err)
	}
	if exp, err := m.Expired(ctx, until, nil); err != nil || len(exp) != 0 {
		t.Errorf("Expired at the lease's end = %d claims, %v; want none: the lease has not ended before now", len(exp), err)
	}
	if exp, err := m.Expired(ctx, until.Add(time.Nanosecond), nil); err != nil || len(exp) != 1 || exp[0].ID != cs[0].ID {
		t.Errorf("Expired a nanosecond after the lease's end = %d claims, %v; want the claim", len(exp), err)
	}
}
