package sched_test

import (
	"context"
	"errors"
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
func TestGaugesAfterASettlePanic(t *testing.T) {
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

// A run that ends in a rerun (the handler's Rerun, or a rescue) puts its
// entry back ready to run at once: the queue latency of the next run
// counts from then (Claim.ReadyAt: "when the entry last became ready to
// run"), not from the add, an hour of the first run ago.
func TestLatencyAfterARerunCountsFromItsEnd(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g := newGauges()
		s := newScheduler(t, sched.Config{Workers: 2, Metrics: g, Logger: quiet})
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Handler: func(_ context.Context, j *sched.Job[int, int]) error {
			if j.Reruns == 0 {
				time.Sleep(time.Hour)
				return sched.Rerun(errors.New("connection reset"))
			}
			return nil
		}})
		must.Add(t, q, 1)
		time.Sleep(2 * time.Hour)
		synctest.Wait()
		if got := g.observations("latency"); len(got) != 2 || got[0] != 0 || got[1] != 0 {
			t.Errorf("latency observations %v, want [0 0]: the rerun ran as soon as it was ready", got)
		}
	})
}

// The same for a run rescued after its lease lapsed: the rerun's queue
// latency counts from the rescue, not from the add.
func TestLatencyAfterARescueCountsFromItsEnd(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g := newGauges()
		s := newScheduler(t, sched.Config{Workers: 2, Metrics: g, Logger: quiet})
		release := make(chan struct{})
		defer close(release)
		first := true
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Lease: time.Second, Handler: func(context.Context, *sched.Job[int, int]) error {
			if first {
				first = false
				<-release // hangs until the test ends: rescued
			}
			return nil
		}})
		must.Add(t, q, 1)
		time.Sleep(time.Hour)
		synctest.Wait()
		rs, err := s.Inspector().Reap(context.Background(), s.Clock().Now(), 0)
		if err != nil || len(rs) != 1 || !rs[0].Running {
			t.Fatalf("Reap = %+v, %v; want the running claim rescued", rs, err)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if got := g.observations("latency"); len(got) != 2 || got[0] != 0 || got[1] != 0 {
			t.Errorf("latency observations %v, want [0 0]: the rescued entry ran again as soon as it was ready", got)
		}
	})
}

// steppedClock is the system clock (the bubble's) stepped by an offset
// that the test changes: a wall clock set back.
type steppedClock struct {
	sched.Clock
	offset atomic.Int64
}

func (c *steppedClock) Now() time.Time {
	return time.Now().Add(time.Duration(c.offset.Load()))
}

// A wall clock stepped back an hour while a run is in progress: the
// running-time gauges and the work duration are seconds taken, never
// negative (as the queue latency, which is floored at 0).
func TestGaugesWhenTheClockGoesBack(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g := newGauges()
		clock := &steppedClock{Clock: must.New(t, sched.Config{}).Clock()}
		s := newScheduler(t, sched.Config{Workers: 2, Metrics: g, Logger: quiet, Clock: clock})
		started := make(chan struct{})
		release := make(chan struct{})
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Handler: func(context.Context, *sched.Job[int, int]) error {
			close(started)
			<-release
			return nil
		}})
		must.Add(t, q, 1)
		<-started
		clock.offset.Store(int64(-time.Hour))
		time.Sleep(time.Second) // two samples
		synctest.Wait()
		if u, l := g.get("unfinished"), g.get("longest"); u < 0 || l < 0 {
			t.Errorf("unfinished %vs, longest %vs after the clock went back; want neither negative", u, l)
		}
		close(release)
		synctest.Wait()
		for _, d := range g.observations("duration") {
			if d < 0 {
				t.Errorf("work duration %vs observed after the clock went back; want none negative", d)
			}
		}
	})
}

// countsPanics is a backend whose Counts always panics.
type countsPanics struct {
	sched.Backend[int, int]
}

func (countsPanics) Counts(context.Context) (sched.Counts, error) { panic("backend bug in Counts") }

// A backend whose Counts panics is "taken as an error of the call" (see
// Faults): the metrics loop, which calls it twice a second for the depth
// gauge, must not keep its queue from running jobs, which it does without
// metrics.
func TestACountsPanicDoesNotStallTheQueue(t *testing.T) {
	t.Parallel()
	for _, metrics := range []bool{false, true} {
		t.Run(map[bool]string{false: "without metrics", true: "with metrics"}[metrics], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := sched.Config{Workers: 2, Logger: quiet}
				if metrics {
					cfg.Metrics = newGauges()
				}
				s := newScheduler(t, cfg)
				var runs atomic.Int64
				q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Backend: countsPanics{sched.NewMemory[int, int]()}, Handler: func(context.Context, *sched.Job[int, int]) error {
					runs.Add(1)
					return nil
				}})
				time.Sleep(2 * time.Second) // the metrics loop has called Counts
				must.Add(t, q, 1)
				time.Sleep(time.Minute)
				synctest.Wait()
				if runs.Load() != 1 {
					t.Errorf("%d runs a minute after the add, want 1", runs.Load())
				}
			})
		})
	}
}
