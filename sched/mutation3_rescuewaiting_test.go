package sched_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
	"github.com/jobkit/jobkit/scope"
)

// gateClock is a Clock whose next Now, once armed, says so (entered) and
// waits for release before it tells the time.
type gateClock struct {
	sched.Clock
	armed            atomic.Bool
	entered, release chan struct{}
}

func (c *gateClock) Now() time.Time {
	if c.armed.CompareAndSwap(true, false) {
		close(c.entered)
		<-c.release
	}
	return c.Clock.Now()
}

// armingBackend is sched's in-memory backend whose Take arms clock once it
// claimed something: the next Now is the worker's, as it begins the batch.
type armingBackend struct {
	sched.Backend[int, int]
	clock *gateClock
	once  atomic.Bool
}

func (b *armingBackend) Take(ctx context.Context, sc *scope.Scope, req sched.TakeRequest, dst []sched.Claim[int, int]) ([]sched.Claim[int, int], error) {
	out, err := b.Backend.Take(ctx, sc, req, dst)
	if len(out) > 0 && b.once.CompareAndSwap(false, true) {
		b.clock.armed.Store(true)
	}
	return out, err
}

// A claim that is first in its batch but whose run has not started yet (its
// worker has the batch, and has not started the claim) is a waiting claim:
// a rescue releases it to run again, reported as not running, and abandons
// no batch and no worker. (From mutation testing: rescue taking the claim
// at the batch's current index for the running one, started or not, and so
// abandoning the batch, survived every test.)
func TestARescueOfTheFirstClaimBeforeItStartsAbandonsNothing(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		clock := &gateClock{Clock: must.New(t, sched.Config{Logger: quiet}).Clock(), entered: make(chan struct{}), release: make(chan struct{})}
		s := must.New(t, sched.Config{Workers: 1, Loops: 1, Logger: quiet, Clock: clock})
		in := s.Inspector()
		in.EnableRescue()
		be := &armingBackend{Backend: sched.NewMemory[int, int](), clock: clock}
		ran := make(chan struct{}, 2)
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Lease: time.Second, Backend: be,
			Handler: func(context.Context, *sched.Job[int, int]) error {
				ran <- struct{}{}
				return nil
			},
		})
		start(t, s, nil)
		synctest.Wait() // the loops and the timekeeper wait: none reads the clock
		id := must.Add(t, q, 1)
		<-clock.entered // dispatched: the worker holds the batch, its claim not started
		rs, err := in.Reap(ctx, time.Now().Add(time.Hour), 0)
		close(clock.release)
		if err != nil || len(rs) != 1 || rs[0].ID != id || rs[0].Running {
			t.Errorf("Reap = %+v, %v; want claim %d rescued as waiting, not running", rs, err, id)
		}
		if n := in.Abandoned(); n != 0 {
			t.Errorf("Abandoned = %d, want 0: no handler ran", n)
		}
		<-ran // released, it runs again
		synctest.Wait()
		if c := must.Counts(t, q); c.Succeeded != 1 || len(ran) != 0 {
			t.Errorf("counts %+v, %d more runs; want the entry run once, and succeeded", c, len(ran))
		}
	})
}
