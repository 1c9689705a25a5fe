package sched_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// Priorities still share the workers once the virtual times have grown
// large: after a run of a century (a Clock that jumped; or, with runs of
// zero time, about four years of slot-time of one queue), hi (priority
// 100) and lo (priority 1), whose runs take no time (each charged a
// microsecond), join long at its virtual time of about 3·10⁹ seconds. The
// bound says lo waits at most (P/p·b + 2·B) = 102 runs of hi. Before, a
// run of hi added 10⁻⁸ s to a virtual time whose float64 steps are 5·10⁻⁷
// s: the addition was lost, hi's virtual time never moved, and lo waited
// until hi's thousand entries were done, as it would have for ever.
func TestPrioritiesShareAfterTheVirtualTimesGrewLarge(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const century = 100 * 365 * 24 * time.Hour
		s := newScheduler(t, sched.Config{Workers: 1, Loops: 1, Logger: quiet})
		var (
			mu    sync.Mutex
			order []string
		)
		release := make(chan struct{})
		logged := func(name string) sched.Handler[int, int] {
			return func(_ context.Context, j *sched.Job[int, int]) error {
				mu.Lock()
				order = append(order, name)
				mu.Unlock()
				if name == "long" && j.Key == 0 {
					<-release
					time.Sleep(century)
				}
				return nil
			}
		}
		long := must.Queue(t, s, "long", sched.QueueConfig[int, int]{BatchSize: 1, Handler: logged("long")})
		hi := must.Queue(t, s, "hi", sched.QueueConfig[int, int]{BatchSize: 1, Priority: 100, Handler: logged("hi")})
		lo := must.Queue(t, s, "lo", sched.QueueConfig[int, int]{BatchSize: 1, Priority: 1, Handler: logged("lo")})
		must.Add(t, long, 0)
		synctest.Wait() // long's run of a century holds the only worker
		must.Add(t, long, 1)
		fill(t, hi, 0, 1000)
		fill(t, lo, 0, 10)
		close(release)
		time.Sleep(2 * century)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		his, los := 0, 0
		for _, r := range order {
			switch r {
			case "hi":
				his++
			case "lo":
				los++
			}
			if los == 2 {
				break
			}
		}
		if los < 2 || his > 2*102 {
			t.Errorf("hi ran %d times before lo's second run (lo ran %d times among them); want at most 204: the bound is 102 runs of hi before each of lo's", his, los)
		}
	})
}

// A batch's slot-time saturates rather than wrap: two runs of 200 years in
// one batch of big (a Clock that jumps ahead by 200 years during each)
// make the longest Duration, and big, which used it, waits while small,
// ready with it from the start and of runs of no time, runs all its
// entries. Before, the sum wrapped to about −184 years, which lowered big's
// virtual time as if it had given the worker back: big ran its four other
// entries before small's first.
func TestASlotTimeOfCenturiesSaturates(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		clock := new(jumpingClock)
		s := must.New(t, sched.Config{Workers: 1, Loops: 1, Logger: quiet, Clock: clock})
		var (
			mu    sync.Mutex
			order []string
		)
		logged := func(name string) sched.Handler[int, int] {
			return func(_ context.Context, j *sched.Job[int, int]) error {
				mu.Lock()
				order = append(order, name)
				mu.Unlock()
				if name == "big" && j.Key < 2 {
					clock.jumps.Add(1) // the run took 200 years
				}
				return nil
			}
		}
		big := must.Queue(t, s, "big", sched.QueueConfig[int, int]{BatchSize: 2, Handler: logged("big")})
		small := must.Queue(t, s, "small", sched.QueueConfig[int, int]{BatchSize: 1, Handler: logged("small")})
		fill(t, big, 0, 6)
		fill(t, small, 0, 4)
		start(t, s, nil) // both ready at the first pick: big, registered first, wins the tie
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		want := []string{"big", "big", "small", "small", "small", "small", "big", "big", "big", "big"}
		if !slices.Equal(order, want) {
			t.Errorf("runs %v, want %v: big, which used the longest slot-time, waits for small", order, want)
		}
	})
}

// jumpingClock is the system clock (the bubble's), ahead by jumps times
// 200 years; reads counts the calls of its Now.
type jumpingClock struct{ jumps, reads atomic.Int64 }

func (c *jumpingClock) Now() time.Time {
	c.reads.Add(1)
	t := time.Now()
	for range c.jumps.Load() {
		t = t.Add(200 * 365 * 24 * time.Hour)
	}
	return t
}

func (c *jumpingClock) NewTimer() sched.Timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return jumpingTimer{t}
}

type jumpingTimer struct{ t *time.Timer }

func (t jumpingTimer) C() <-chan time.Time   { return t.t.C }
func (t jumpingTimer) Reset(d time.Duration) { t.t.Reset(d) }
func (t jumpingTimer) Stop()                 { t.t.Stop() }
