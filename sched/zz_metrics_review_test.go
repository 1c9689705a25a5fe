package sched_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// settlePanics is a backend whose first Settle panics after settling.
type settlePanics struct {
	sched.Backend[int, int]
	n      atomic.Int64
	goexit bool
}

func (b *settlePanics) Settle(ctx context.Context, c *sched.Claim[int, int], o sched.Outcome) error {
	err := b.Backend.Settle(ctx, c, o)
	if b.n.Add(1) == 1 {
		if b.goexit {
			runtime.Goexit()
		}
		panic("backend bug in Settle")
	}
	return err
}

// A backend whose Settle panics on a worker is contained (see Faults); the
// run ended, so the unfinished-work and longest-running gauges must fall
// back to 0 rather than count the dropped batch as running for ever.
func TestReviewGaugesAfterSettlePanic(t *testing.T) {
	t.Parallel()
	for _, goexit := range []bool{false, true} {
		t.Run(map[bool]string{false: "panic", true: "goexit"}[goexit], func(t *testing.T) { gaugesAfterSettleFault(t, goexit) })
	}
}

func gaugesAfterSettleFault(t *testing.T, goexit bool) {
	synctest.Test(t, func(t *testing.T) {
		g := newGauges()
		s := newScheduler(t, sched.Config{Workers: 2, Metrics: g, Logger: quiet})
		b := &settlePanics{Backend: sched.NewMemory[int, int](), goexit: goexit}
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Backend: b, Handler: func(context.Context, *sched.Job[int, int]) error {
			time.Sleep(time.Second)
			return nil
		}})
		must.Add(t, q, 1)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if b.n.Load() != 1 {
			t.Fatalf("%d settlements, want 1", b.n.Load())
		}
		if u, l := g.get("unfinished"), g.get("longest"); u != 0 || l != 0 {
			t.Errorf("unfinished %vs, longest %vs after the only run ended; want 0", u, l)
		}
	})
}
