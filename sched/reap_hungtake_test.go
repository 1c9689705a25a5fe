package sched_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
	"github.com/jobkit/jobkit/scope"
)

// A Take of this process that hangs past its lease (a durable backend's
// reply that never comes) must not hold up the rescue of another process's
// lapsed claim of the same queue: the rescue in the backend is fenced by
// the cutoff (Outcome.LapsedBefore), so a claim of the Take in flight is
// safe to rescue too. Before, every lapsed claim that no live batch held
// was left "for the next sweep" for as long as the Take hung.
func TestAHungTakeDoesNotHoldUpAnotherProcesssRescue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		mem := sched.NewMemory[int, int]()
		be := &hangingTake{Memory: mem, release: make(chan struct{})}
		s, in := rescuing(t, 1)
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Lease: time.Second, Backend: be, Handler: nop[int, int]})
		q.Pause() // only the other process takes the first entry
		other := must.Add(t, q, 1)
		now := time.Now()
		sc := scope.New()
		defer func() { _ = sc.Close(scope.Succeeded()) }()
		cs, err := mem.Take(ctx, sc, sched.TakeRequest{Now: now, Max: 1, LeaseUntil: now.Add(time.Second)}, nil)
		if err != nil || len(cs) != 1 {
			t.Fatalf("Take = %d claims, %v; want 1", len(cs), err)
		}
		mine := must.Add(t, q, 2)
		start(t, s, func() { close(be.release) })
		q.Resume() // this process's Take claims the second entry, and hangs
		synctest.Wait()
		time.Sleep(time.Hour) // both leases lapsed long ago
		rs, err := in.Reap(ctx, time.Now(), 0)
		got := map[sched.ID]bool{}
		for _, r := range rs {
			got[r.ID] = true
		}
		if err != nil || !got[other] {
			t.Errorf("Reap = %+v, %v; want the other process's claim %d rescued", rs, err, other)
		}
		if e, err := in.Get(ctx, "q", other); err != nil || e.State != sched.StatePending {
			t.Errorf("entry %d = %+v, %v; want pending again", other, e, err)
		}
		_ = mine
	})
}
