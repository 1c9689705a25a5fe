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

// panickingForeignSettle panics in a Settle of a claim held by no batch of
// this process (one fenced by LapsedBefore, as Reap settles another
// process's claim).
type panickingForeignSettle struct {
	*sched.Memory[int, int]
}

func (b panickingForeignSettle) Settle(ctx context.Context, c *sched.Claim[int, int], o sched.Outcome) error {
	if !o.LapsedBefore.IsZero() {
		panic("settle")
	}
	return b.Memory.Settle(ctx, c, o)
}

// A backend that panics in Reap's Settle of another process's claim, after
// Reap rescued a run of this process in the same queue, loses that rescue
// from Reap's answer no more than an error does: the run was rescued (its
// context cancelled, its entry run again), and the reaper counts what Reap
// returns. Before, the panic dropped every rescue of the queue's sweep.
func TestReapPanicKeepsTheRescuesDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		mem := sched.NewMemory[int, int]()
		s, in := rescuing(t, 1)
		gate := make(chan struct{})
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Lease: time.Second, BatchSize: 1,
			Backend: panickingForeignSettle{mem},
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				if j.Rescues == 0 {
					<-gate
				}
				return nil
			}})
		ours := must.Add(t, q, 1)
		start(t, s, func() { close(gate) })
		synctest.Wait() // ours runs, and hangs
		other := must.Add(t, q, 2)
		q.Pause()
		now := time.Now()
		sc := scope.New()
		defer func() { _ = sc.Close(scope.Succeeded()) }()
		cs, err := mem.Take(ctx, sc, sched.TakeRequest{Now: now, Max: 1, LeaseUntil: now.Add(time.Second)}, nil)
		if err != nil || len(cs) != 1 || cs[0].ID != other {
			t.Fatal(cs, err)
		}
		time.Sleep(3 * time.Second)
		synctest.Wait()
		rs, err := in.Reap(ctx, time.Now(), 0)
		found := false
		for _, r := range rs {
			found = found || r.ID == ours && r.Running
		}
		if err == nil || !found {
			t.Errorf("Reap = %+v, %v; want the run of %d rescued, and an error", rs, err, ours)
		}
		if e, err := in.Get(ctx, "q", ours); err != nil || e.Rescues != 1 {
			t.Fatalf("entry %+v, %v: want it rescued once", e, err)
		}
	})
}
