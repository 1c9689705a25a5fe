package sched_test

import (
	"context"
	"testing"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// The timekeeper sleeps until a delayed entry is due also once the Clock
// has moved past the instants the scheduler holds (as a test's Clock that
// jumps does), for a queue registered then, whose backend's instants
// start there and are exact: of two entries delayed by 1.5 s and then by
// 100 ms (far apart, so that a loaded machine keeps their order), the second runs while the first still waits, the first runs after,
// and meanwhile the scheduler reads the Clock a few times, not in a hot
// loop. Before, the due time the timekeeper kept was the scheduler's
// saturated instant, which had always come: it promoted, the backend said
// the entry was due later, and it looked again at once, reading the Clock
// hundreds of thousands of times until the entry was due.
func TestTheTimekeeperSleepsOnceTheClockIsPastTheScheduledRange(t *testing.T) {
	t.Parallel()
	clock := new(jumpingClock)
	s := must.New(t, sched.Config{Workers: 1, Loops: 1, Logger: quiet, Clock: clock})
	start(t, s, nil)
	clock.jumps.Store(1) // 200 years on
	ran := make(chan int, 2)
	var q *sched.Queue[int, int]
	q = must.Queue(t, s, "q", sched.QueueConfig[int, int]{
		Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
			if c, err := q.Counts(ctx); err != nil || j.Key == 2 && c.Delayed != 1 {
				t.Errorf("counts %+v, %v as the entry delayed by 100 ms runs: want the one delayed by 1.5 s still delayed", c, err)
			}
			ran <- j.Key
			return nil
		}})
	before := clock.reads.Load()
	must.Add(t, q, 1, sched.After(1500*time.Millisecond))
	must.Add(t, q, 2, sched.After(100*time.Millisecond))
	timeout := time.After(10 * time.Second) // a bound on a failure, not a synchronisation
	for _, want := range []int{2, 1} {
		select {
		case k := <-ran:
			if k != want {
				t.Errorf("entry %d ran, want %d", k, want)
			}
		case <-timeout:
			t.Fatalf("entry %d, delayed by at most 1.5 s, did not run within 10 s", want)
		}
	}
	if n := clock.reads.Load() - before; n > 1000 {
		t.Errorf("the Clock was read %d times while entries were delayed by 1.5 s: the timekeeper spun", n)
	}
}
