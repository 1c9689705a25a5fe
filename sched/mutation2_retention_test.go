package sched_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// Each final state is bounded by its own limit: cancelled entries past
// MaxCancelled evict older cancelled entries, never failed ones, and failed
// entries within MaxFailed all stay. (From mutation testing: Memory keeping
// cancelled entries in the failed entries' retention list, so that
// MaxCancelled evicted failures, survived every test.)
func TestCancelledEntriesDoNotEvictFailedOnes(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			BatchSize: 1,
			Retention: &sched.Retention{
				Failed: time.Hour, MaxFailed: 10,
				Cancelled: time.Hour, MaxCancelled: 1,
				Succeeded: time.Hour, MaxSucceeded: 10,
			},
			Handler: func(_ context.Context, j *sched.Job[int, int]) error {
				if j.Key <= 2 {
					return sched.Permanent(errors.New("fails"))
				}
				return sched.Cancel(errors.New("cancelled"))
			},
		})
		for k := 1; k <= 4; k++ {
			must.Add(t, q, k)
			synctest.Wait() // one at a time: 1 and 2 fail, then 3 and 4 are cancelled
		}
		c := must.Counts(t, q)
		if c.Failed != 2 || c.Cancelled != 1 || c.Expired != 1 {
			t.Errorf("counts %+v, want 2 failed kept, 1 cancelled kept (MaxCancelled) and 1 expired", c)
		}
		for k, want := range map[sched.ID]sched.State{1: sched.StateFailed, 2: sched.StateFailed, 4: sched.StateCancelled} {
			if e, err := q.Get(context.Background(), k); err != nil || e.State != want {
				t.Errorf("entry %d: %v, %v; want %v", k, e.State, err, want)
			}
		}
		if _, err := q.Get(context.Background(), 3); !errors.Is(err, sched.ErrNotFound) {
			t.Errorf("entry 3, the older cancelled one: %v, want ErrNotFound", err)
		}
	})
}

// A Retry with reset starts the entry afresh: its attempts, reruns,
// rescues and snoozes are zero again (a rerun count left would poison it
// early, MaxReruns counting runs of its earlier life). (From mutation
// testing: Memory.Retry leaving Snoozes, or Reruns, as they were survived
// every test.)
func TestARetryWithResetZeroesEveryCount(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
		runs := 0
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Handler: func(context.Context, *sched.Job[int, int]) error {
				runs++
				switch runs {
				case 1:
					return sched.Snooze(time.Second)
				case 2:
					return sched.Rerun(errors.New("again"))
				}
				return sched.Permanent(errors.New("fails"))
			},
		})
		id := must.Add(t, q, 1)
		time.Sleep(time.Minute)
		synctest.Wait()
		e, err := q.Get(ctx, id)
		if err != nil || e.State != sched.StateFailed || e.Snoozes != 1 || e.Reruns != 1 || e.Attempts != 1 {
			t.Fatalf("before the Retry: %+v, %v; want failed after 1 snooze, 1 rerun and 1 attempt", e, err)
		}
		q.Pause() // so that the retried entry stays pending
		if err := s.Inspector().RetryID(ctx, "q", id, true); err != nil {
			t.Fatal(err)
		}
		e, err = q.Get(ctx, id)
		if err != nil || e.State != sched.StatePending || e.Snoozes != 0 || e.Reruns != 0 || e.Attempts != 0 || e.Rescues != 0 {
			t.Errorf("after a Retry with reset: %v, attempts %d, reruns %d, rescues %d, snoozes %d (%v); want pending with every count 0",
				e.State, e.Attempts, e.Reruns, e.Rescues, e.Snoozes, err)
		}
	})
}

// A cancelled entry expires when its own retention ends, though an entry
// kept longer expires later: the scheduler's timekeeper, asleep until the
// succeeded entry's expiry, is woken for the cancelled one's. (From
// mutation testing: waking the timekeeper at the end of the failed
// entries' retention for a cancelled run survived every test; the
// cancelled entry then outlived its retention by 29 minutes here.)
func TestACancelledEntryExpiresOnTimeBehindALongerRetention(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Retention: &sched.Retention{
				Succeeded: 30 * time.Minute, MaxSucceeded: 10,
				Cancelled: time.Minute, MaxCancelled: 10,
				Failed: time.Hour, MaxFailed: 10,
			},
			Handler: func(_ context.Context, j *sched.Job[int, int]) error {
				if j.Key == 2 {
					return sched.Cancel(errors.New("not wanted"))
				}
				return nil
			},
		})
		must.Add(t, q, 1)
		synctest.Wait() // succeeded: the timekeeper sleeps until it expires, in 30 minutes
		must.Add(t, q, 2)
		synctest.Wait() // cancelled: it expires in a minute
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if c := must.Counts(t, q); c.Succeeded != 1 || c.Cancelled != 0 || c.Expired != 1 {
			t.Errorf("counts %+v two minutes on, want the cancelled entry expired and the succeeded one kept", c)
		}
	})
}

// Of entries that finished at the same instant, the one that finished
// first is the oldest: MaxSucceeded 1 keeps the later one. (From mutation
// testing: retained entries inserted before those that finished at the
// same instant, so that the count limit deleted the newest, survived every
// test.)
func TestTheCountLimitDeletesTheFirstFinishedOfATie(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			BatchSize: 1,
			Retention: &sched.Retention{Succeeded: time.Hour, MaxSucceeded: 1},
			Handler:   nop[int, int],
		})
		first := must.Add(t, q, 1)
		synctest.Wait()
		second := must.Add(t, q, 2)
		synctest.Wait() // both finished at the bubble's one instant
		if _, err := q.Get(ctx, first); !errors.Is(err, sched.ErrNotFound) {
			t.Errorf("the first entry to finish: %v, want ErrNotFound (deleted by MaxSucceeded)", err)
		}
		if e, err := q.Get(ctx, second); err != nil || e.State != sched.StateSucceeded {
			t.Errorf("the last entry to finish: %v, %v; want it kept", e.State, err)
		}
	})
}
