package sched

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"
)

// The fairness arithmetic stays in range for runs of decades (a Clock that
// jumps): a batch of such runs takes one entry (see batchSize), and is
// estimated at one run, not wrapped to a negative charge, which would
// lower the pass of the queue that used the most; and the moving average
// of a run stays between the old average and the new run. (From mutation
// testing: kills going back to charge's 4·avgRun.)
func TestFairnessOfRunsOfDecades(t *testing.T) {
	t.Parallel()
	const decades = 80 * 365 * 24 * time.Hour
	q := &queueBase{batch: 8, priority: 1, avgRun: decades}
	if n := q.batchSize(); n != 1 || q.estimate(n) != decades {
		t.Errorf("a batch of runs of 80 years takes %d entries and is estimated at %v, want 1 and 80 years", n, q.estimate(n))
	}
	var s Scheduler
	s.charge(q, 0, decades, 1)
	if q.avgRun != decades {
		t.Errorf("after another run of 80 years, the average run is %v, want 80 years (%v)", q.avgRun, time.Duration(decades))
	}
	if q.pass <= 0 {
		t.Errorf("pass %v after a batch that used 80 years, want it raised", q.pass)
	}
}

// A queue that one loop is dispatching when another loop picks is not
// idle: it keeps its pass, so that priorities 3:1 still share 3:1 when the
// two loops pick at once. Before, the second pick saw the queue as not
// ready and, when it was ready again, raised its pass to the others' as
// for a queue that had been idle, giving up the credit its priority had
// earned: TestFairnessFollowsPriorities saw shares from 2.6 to 3.0 between
// runs under load. Here every fourth pick is made while the queue picked
// just before is being dispatched, and each batch uses what it was
// charged.
func TestAQueueBeingDispatchedKeepsItsPass(t *testing.T) {
	t.Parallel()
	s, err := New(Config{Workers: 2, Loops: 2, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	h := func(context.Context, *Job[int, int]) error { return nil }
	var qs [2]*queueBase
	for i, prio := range []int{3, 1} {
		q, err := NewQueue(s, fmt.Sprint("q", i), QueueConfig[int, int]{Handler: h, Priority: prio, BatchSize: 1})
		if err != nil {
			t.Fatal(err)
		}
		q.notified.Store(1) // ready
		qs[i] = &q.queueBase
	}
	picks := map[*queueBase]int{}
	now := time.Unix(1e9, 0)
	var prev *queueBase
	for i := range 4000 {
		if i%4 == 0 && prev != nil {
			prev.dispatching.Store(true) // another loop dispatches it as this one picks
		}
		r, charged, _, _ := s.pick(now)
		if prev != nil {
			prev.dispatching.Store(false)
		}
		if r == nil {
			t.Fatal("no queue picked while both are ready")
		}
		q := r.base()
		picks[q]++
		s.charge(q, charged, charged, 1)
		prev = q
	}
	if ratio := float64(picks[qs[0]]) / float64(picks[qs[1]]); ratio < 2.97 || ratio > 3.03 {
		t.Errorf("picks %d:%d = %.3f, want 3:1 within 1%%", picks[qs[0]], picks[qs[1]], ratio)
	}
}
