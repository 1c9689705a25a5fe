package sched_test

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// Ties of virtual time go round robin: a queue that becomes ready while
// another runs starts at that queue's virtual time, a tie, and is served
// next rather than the queue just served. (From mutation testing: pick
// setting its round-robin start to the queue it picked, bestAt, instead of
// the one after it, survived every test: the queue just served won every
// tie.)
func TestATieGoesToTheQueueNotJustServed(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		a, b, log := logTwoQueues(t, "a1")
		must.Add(t, a, 1)
		synctest.Wait() // a1 runs on the only worker
		must.Add(t, a, 2)
		must.Add(t, a, 3)
		must.Add(t, b, 1)
		synctest.Wait()
		close(log.release)
		synctest.Wait()
		order := log.runs()
		if want := []string{"a1", "b1", "a2", "a3"}; !slices.Equal(order, want) {
			t.Errorf("runs %v, want %v: b, ready at a's virtual time, lost the tie to a, just served", order, want)
		}
	})
}

// A queue that becomes ready after being idle starts at the smallest
// virtual time of the queues that stayed ready, so idleness earns no
// credit: b, idle while a ran ten batches, shares the worker with a once
// both wait, rather than running all its entries first. (From mutation
// testing: pick without raising a newly ready queue's pass to that of
// the queues that stayed ready survived every test.)
func TestIdlenessEarnsNoCredit(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		a, b, log := logTwoQueues(t, "a11")
		for k := 1; k <= 10; k++ {
			must.Add(t, a, k)
		}
		synctest.Wait() // a ran ten batches; b was idle
		must.Add(t, a, 11)
		synctest.Wait() // a11 holds the only worker
		for k := 12; k <= 14; k++ {
			must.Add(t, a, k)
		}
		for k := 1; k <= 4; k++ {
			must.Add(t, b, k)
		}
		synctest.Wait()
		close(log.release)
		synctest.Wait()
		order := log.runs()
		// Taking turns from the first: an idle queue given even part of a
		// credit runs two of its entries in a row.
		if want := []string{"a11", "b1", "a12", "b2", "a13", "b3", "a14", "b4"}; len(order) != 18 || !slices.Equal(order[10:], want) {
			t.Errorf("runs after a's first ten: %v; want %v (b's idleness earns no credit: the two take turns)", order[min(10, len(order)):], want)
		}
	})
}

// runLog records the order in which its handlers run, as "a1" for the
// entry with key 1 of queue a. The run named hold waits until release is
// closed.
type runLog struct {
	mu      sync.Mutex
	order   []string
	hold    string
	release chan struct{}
}

// logTwoQueues makes a scheduler with one worker and one loop, and on it
// queues a and b of batches of 1, whose runs log records; the run named
// hold waits until log.release is closed.
func logTwoQueues(t *testing.T, hold string) (a, b *sched.Queue[int, int], log *runLog) {
	t.Helper()
	s := newScheduler(t, sched.Config{Workers: 1, Loops: 1, Logger: quiet})
	log = &runLog{hold: hold, release: make(chan struct{})}
	a = must.Queue(t, s, "a", sched.QueueConfig[int, int]{BatchSize: 1, Handler: log.handler("a")})
	b = must.Queue(t, s, "b", sched.QueueConfig[int, int]{BatchSize: 1, Handler: log.handler("b")})
	return a, b, log
}

// handler is the handler of queue name.
func (l *runLog) handler(name string) sched.Handler[int, int] {
	return func(_ context.Context, j *sched.Job[int, int]) error {
		run := name + strconv.Itoa(j.Key)
		l.mu.Lock()
		l.order = append(l.order, run)
		l.mu.Unlock()
		if run == l.hold {
			<-l.release
		}
		return nil
	}
}

// runs returns the runs so far, in order.
func (l *runLog) runs() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.order)
}
