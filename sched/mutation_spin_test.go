package sched_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// spinClock tells the bubble's time and, once armed, counts the reads of
// it: past budget it records a spin and blocks the reader until released,
// so that a goroutine spinning on the clock ends durably blocked and
// synctest.Wait returns instead of waiting for ever.
type spinClock struct {
	sched.Clock
	armed   atomic.Bool
	calls   atomic.Int64
	spun    atomic.Bool
	release chan struct{}
}

const spinBudget = 1000

// spinScheduler makes a scheduler with two workers and one loop on a
// spinClock, disarmed. Its cleanup lets the clock's blocked readers go
// before the scheduler's Stop (cleanups run last first), which would wait
// for them.
func spinScheduler(t *testing.T) (*spinClock, *sched.Scheduler) {
	t.Helper()
	c := &spinClock{Clock: must.New(t, sched.Config{}).Clock(), release: make(chan struct{})}
	s := newScheduler(t, sched.Config{Workers: 2, Loops: 1, Logger: quiet, Clock: c})
	t.Cleanup(func() { c.armed.Store(false); close(c.release) })
	return c, s
}

func (c *spinClock) Now() time.Time {
	if c.armed.Load() && c.calls.Add(1) > spinBudget {
		c.spun.Store(true)
		<-c.release
	}
	return time.Now()
}

// disarm stops counting the reads of the clock and, if they went past
// budget while the queue was in the state what says, reports a spin and
// lets the blocked readers go.
func (c *spinClock) disarm(t *testing.T, what string) {
	t.Helper()
	spun := c.spun.Load()
	c.armed.Store(false)
	if spun {
		close(c.release)
		c.release = make(chan struct{}) // for the cleanup
		t.Errorf("the clock was read more than %d times while %s: a loop spins", spinBudget, what)
	}
}

// A queue at its cap with entries pending leaves its loops asleep until a
// run ends: they do not pick it, fail to dispatch and pick it again.
// (From mutation testing: ready letting through a queue whose in-flight
// entries equal its cap, inflight > c for inflight ≥ c, survived every
// test: dispatch then finds no room, and the loop spins on the queue
// until the run ends.)
func TestAQueueAtItsCapIsNotPickedInAHotLoop(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		clock, s := spinScheduler(t)
		done := make(chan struct{})
		var runs atomic.Int32
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			MaxConcurrency: 1,
			BatchSize:      1,
			Handler: func(context.Context, *sched.Job[int, int]) error {
				runs.Add(1)
				<-done
				return nil
			},
		})
		clock.armed.Store(true)
		must.Add(t, q, 1)
		must.Add(t, q, 2)
		synctest.Wait() // 1 runs; 2 waits for the cap
		clock.disarm(t, "the queue sat at its cap")
		if n := runs.Load(); n != 1 {
			t.Errorf("%d runs with a cap of 1", n)
		}
		close(done)
		synctest.Wait()
		if n := runs.Load(); n != 2 {
			t.Errorf("%d runs once the cap freed up, want 2", n)
		}
	})
}

// A paused queue with entries pending leaves its loops asleep until it is
// resumed. (From mutation testing: ready without its paused check was
// killed only by the suites' timeouts, a loop taking batches whose
// workers start nothing and spinning; this fails at once.)
func TestAPausedQueueIsNotPickedInAHotLoop(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		clock, s := spinScheduler(t)
		var runs atomic.Int32
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Handler: func(context.Context, *sched.Job[int, int]) error { runs.Add(1); return nil },
		})
		q.Pause()
		clock.armed.Store(true)
		must.Add(t, q, 1)
		must.Add(t, q, 2)
		synctest.Wait()
		clock.disarm(t, "the queue was paused")
		if n := runs.Load(); n != 0 {
			t.Errorf("%d runs of a paused queue", n)
		}
		q.Resume()
		synctest.Wait()
		if n := runs.Load(); n != 2 {
			t.Errorf("%d runs once resumed, want 2", n)
		}
	})
}
