package sched_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// Regression tests of bugs found while building the cron engine on the
// scheduler (a data race on a queue's average run time, and an entry
// snoozed until a time that has come left pending for ever) and by the
// property tests (a due retry that jumped the queue).

// TestAvgRunRace failed under -race: sched's queueBase.estimate
// reads queueBase.avgRun without Scheduler.mu, from a scheduling loop
// (queue.go, dispatch's b.charged; loop.go, the charge after a dispatch
// that took nothing), while Scheduler.charge writes it under Scheduler.mu
// when a worker finishes a batch. Any queue with runs ending while a loop
// dispatches hits it; the engine's tests would be blamed for it at random.
// The fix is to read avgRun under mu (or keep it in an atomic).
//
// Entries snooze from one second to the next, as the engine's entries do,
// on two queues: on one, many are due together (a loop dispatches while
// workers finish); on the other, one at a time (both loops wake for it, one
// takes nothing). The test is not parallel, so that it runs before the
// parallel tests: the race detector reports a race once per process (per
// pair of program counters; the queues have the engine's types for that),
// and this test is then the one it fails.
func TestAvgRunRace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, err := sched.New(sched.Config{Workers: 4})
		if err != nil {
			t.Fatal(err)
		}
		end := time.Now().Add(20000 * time.Second)
		var queues []*sched.Queue[string, string]
		for _, keys := range []int{50, 3} {
			q, err := sched.NewQueue(s, "race"+strconv.Itoa(keys), sched.QueueConfig[string, string]{
				BatchSize: 1,
				Handler: func(_ context.Context, j *sched.Job[string, string]) error {
					var offset time.Duration
					if keys == 3 {
						k, _ := strconv.Atoi(j.Key)
						offset = time.Duration(k) * time.Second / 3
					}
					if next := time.Now().Truncate(time.Second).Add(time.Second + offset); next.Before(end) {
						return sched.SnoozeUntil(next)
					}
					return nil
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			for i := range keys {
				if _, _, err := q.Add(ctx, strconv.Itoa(i)); err != nil {
					t.Fatal(err)
				}
			}
			queues = append(queues, q)
		}
		// The crowded queue stops after 1000 seconds; the sparse one goes
		// on alone.
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1000 * time.Second)
		queues[0].Pause()
		time.Sleep(time.Until(end) + time.Second)
		if c, err := queues[1].Counts(ctx); err != nil || c.Live() != 0 {
			t.Errorf("Counts = %+v, %v; want no live entry", c, err)
		}
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// TestSnoozeUntilNowRunsAgain failed: an entry whose handler snoozes until a
// time that has come (SnoozeUntil(now), as a periodic job that must run
// again at once does) can stay pending forever, never dispatched. Memory's
// Settle makes it delayed; a scheduling loop woken by the snooze takes
// before the batch's scope closes, promotes the entry and enqueues its unit,
// which distinct refuses (the unit is still in progress in the scope);
// the take's done then counted the unit as put back by distinct, which it was not
// (the scope succeeded: distinct dropped it). The level counts a unit that
// is in no queue. The test snoozes one entry at once 50,000 times and waits
// an hour of fake time for it to finish.
func TestSnoozeUntilNowRunsAgain(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, err := sched.New(sched.Config{Workers: 4})
		if err != nil {
			t.Fatal(err)
		}
		const n = 50000
		runs := 0
		done := make(chan struct{})
		q, err := sched.NewQueue(s, "snooze", sched.QueueConfig[string, string]{
			BatchSize: 1,
			Handler: func(context.Context, *sched.Job[string, string]) error {
				if runs++; runs < n {
					return sched.SnoozeUntil(time.Now())
				}
				close(done)
				return nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := q.Add(ctx, "job"); err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case <-done:
		case <-time.After(time.Hour):
			c, _ := q.Counts(ctx)
			t.Errorf("after %d of %d runs the entry is stuck: counts %+v", runs, n, c)
		}
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// A handler that stops its scheduler does not deadlock: Stop returns
// without waiting for the handler, and the scheduler stops.
func TestStopFromAHandler(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, err := sched.New(sched.Config{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		stopped := make(chan error, 1)
		q, _ := sched.NewQueue(s, "q", sched.QueueConfig[string, string]{Handler: func(ctx context.Context, j *sched.Job[string, string]) error {
			stopped <- s.Stop(ctx)
			return nil
		}})
		if _, _, err := q.Add(ctx, "stop"); err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-stopped; err != nil {
			t.Errorf("Stop from a handler = %v", err)
		}
		if _, _, err := q.Add(ctx, "after"); !errors.Is(err, sched.ErrStopped) {
			t.Errorf("Add after the handler's Stop = %v, want ErrStopped", err)
		}
		if err := s.Stop(ctx); err != nil { // waits for the handler now
			t.Fatal(err)
		}
	})
}

// promoteOnSettle is the in-memory backend with the timekeeper always
// winning a race: each Settle promotes what is due at once, while the
// batch's scope is still open.
type promoteOnSettle struct{ sched.Backend[int, int] }

func (b promoteOnSettle) Settle(ctx context.Context, c *sched.Claim[int, int], o sched.Outcome) error {
	err := b.Backend.Settle(ctx, c, o)
	_, _, _ = b.Backend.Promote(ctx, o.Finished)
	return err
}

// TestADueRetryGoesToTheTail failed: a retry already due when its run
// settled, promoted before the batch's scope closed, went back to the
// place it had before it ran (distinct's scope kept its unit), ahead of
// entries that had been pending all along. It became pending last, so it
// runs last (the model in props found it as a flaky FIFO violation).
func TestADueRetryGoesToTheTail(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 1, Loops: 1})
		gate := make(chan struct{})
		var order []string // one worker: one run at a time
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Backend:   promoteOnSettle{sched.NewMemory[int, int]()},
			BatchSize: 1,
			Retry:     &sched.RetryPolicy{MaxRetries: 1, Base: time.Second},
			Handler: func(_ context.Context, j *sched.Job[int, int]) error {
				order = append(order, fmt.Sprintf("%d#%d", j.Payload, j.Attempt))
				if j.Payload == 1 && j.Attempt == 1 {
					<-gate
					return errors.New("fails")
				}
				return nil
			},
		})
		must.Add(t, q, 1)
		synctest.Wait() // 1 runs
		time.Sleep(500 * time.Millisecond)
		must.Add(t, q, 2) // pending from 0.5 s on
		time.Sleep(600 * time.Millisecond)
		close(gate) // 1 fails at 1.1 s: its retry was due at 1 s
		time.Sleep(time.Minute)
		synctest.Wait()
		if got := strings.Join(order, " "); got != "1#1 2#1 1#2" {
			t.Errorf("runs %s, want 1#1 2#1 1#2", got)
		}
	})
}
