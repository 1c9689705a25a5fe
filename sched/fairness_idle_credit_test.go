package sched_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// A queue idle for a long time earns no credit either when no queue stayed
// ready to take its virtual time from: busy ran a hundred runs alone and
// drained; idle, which never ran, and busy become ready together (the only
// worker held meanwhile by a run of a third queue). The package's bound then
// says that busy, ready, waits at most (P/p·b + 2·B)·d = 3·d while idle is
// saturated. Before, idle kept the virtual time of its registration (0)
// and ran all its ten entries before busy's first: a queue idle for a
// week, on its next burst, had the workers to itself until it caught up on
// a week of the others' slot-time.
func TestIdlenessEarnsNoCreditWhenNoQueueStayedReady(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const d = 10 * time.Millisecond
		s := newScheduler(t, sched.Config{Workers: 1, Loops: 1, Logger: quiet})
		o := &runOrder{d: d}
		logged := o.handler
		busy := must.Queue(t, s, "busy", sched.QueueConfig[int, int]{BatchSize: 1, Handler: logged("busy")})
		idle := must.Queue(t, s, "idle", sched.QueueConfig[int, int]{BatchSize: 1, Handler: logged("idle")})
		g := newGate(t, s)
		fill(t, busy, 0, 100)
		time.Sleep(200 * d) // busy's hundred runs, alone
		synctest.Wait()     // busy drained: every queue is idle
		g.readyTogether(o, 100*d, func() {
			fill(t, busy, 100, 10)
			fill(t, idle, 0, 10)
		})
		order, before := o.before("busy")
		if len(order) != 20 || before > 3 {
			t.Errorf("runs once both were ready: %v; idle ran %d times before busy's first, want at most 3 (P/p·b + 2·B)", order, before)
		}
	})
}

// A queue registered late starts at the virtual time of the queues it
// joins, not at that of the first queue registered: first ran one batch of
// a hundred runs and drained; late, registered then, and early, which
// never ran, become ready together (the only worker held meanwhile by a
// run of a third queue) and take turns, as two queues that never ran do.
// Before, late started at first's virtual time, though first was idle,
// and waited while early ran all its ten entries, past the bound of
// (P/p·b + 2·B)·d = 3·d.
func TestALateQueueStartsAtTheVirtualTimeOfTheQueuesItJoins(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const d = 10 * time.Millisecond
		s := newScheduler(t, sched.Config{Workers: 1, Loops: 1, Logger: quiet})
		o := &runOrder{d: d}
		logged := o.handler
		first := must.Queue(t, s, "first", sched.QueueConfig[int, int]{BatchSize: 100, Handler: logged("first")})
		early := must.Queue(t, s, "early", sched.QueueConfig[int, int]{BatchSize: 1, Handler: logged("early")})
		g := newGate(t, s)
		fill(t, first, 0, 100)
		time.Sleep(200 * d) // first's batch of a hundred runs
		synctest.Wait()     // first drained: every queue is idle
		late := must.Queue(t, s, "late", sched.QueueConfig[int, int]{BatchSize: 1, Handler: logged("late")})
		g.readyTogether(o, 100*d, func() {
			fill(t, early, 0, 10)
			fill(t, late, 0, 10)
		})
		order, before := o.before("late")
		if len(order) != 20 || before > 3 {
			t.Errorf("runs once both were ready: %v; early ran %d times before late's first, want at most 3 (P/p·b + 2·B)", order, before)
		}
	})
}

// gate is a queue whose one run holds the only worker until it is let go.
type gate struct {
	t       *testing.T
	q       *sched.Queue[int, int]
	release chan struct{}
}

func newGate(t *testing.T, s *sched.Scheduler) *gate {
	g := &gate{t: t, release: make(chan struct{})}
	g.q = must.Queue(t, s, "gate", sched.QueueConfig[int, int]{BatchSize: 1,
		Handler: func(context.Context, *sched.Job[int, int]) error { <-g.release; return nil }})
	return g
}

// readyTogether holds the only worker with the gate's run, calls ready,
// which makes queues ready meanwhile, forgets the runs o logged so far,
// lets the worker go and waits for wait.
func (g *gate) readyTogether(o *runOrder, wait time.Duration, ready func()) {
	must.Add(g.t, g.q, 0)
	synctest.Wait() // the gate's run holds the only worker
	ready()
	o.reset()
	close(g.release)
	time.Sleep(wait)
	synctest.Wait()
}

// runOrder logs the runs of the queues whose handlers it makes, in order.
type runOrder struct {
	d    time.Duration // how long each run takes, in the bubble's time
	mu   sync.Mutex
	runs []string
}

// handler logs each run as the queue's name and the entry's key, then
// takes o.d.
func (o *runOrder) handler(name string) sched.Handler[int, int] {
	return func(_ context.Context, j *sched.Job[int, int]) error {
		o.mu.Lock()
		o.runs = append(o.runs, name+strconv.Itoa(j.Key))
		o.mu.Unlock()
		time.Sleep(o.d)
		return nil
	}
}

// reset forgets the runs logged so far.
func (o *runOrder) reset() {
	o.mu.Lock()
	o.runs = o.runs[:0]
	o.mu.Unlock()
}

// before returns the runs logged and how many came before the first run
// of the queue named name.
func (o *runOrder) before(name string) ([]string, int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, r := range o.runs {
		if strings.HasPrefix(r, name) {
			break
		}
		n++
	}
	return slices.Clone(o.runs), n
}
