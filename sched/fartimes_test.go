package sched_test

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// forever is the longest time.Duration, which users write for "never" or
// "for ever".
const forever = time.Duration(math.MaxInt64)

// Times beyond what an int64 of unix nanoseconds holds (after 2262) stay
// far off: an entry added for the year 3000 or after forever, snoozed for
// ever, or retried after a delay saturated at forever waits; an entry kept
// for ever is kept; a run leased for ever is not rescued; a query from the
// year 3000 selects nothing. Before, they wrapped around into the past:
// the entries ran at once (a snooze for ever in a hot loop), the retained
// entry expired at once, the lease had lapsed, and the query selected
// every entry.
func TestTimesPastTheNanosecondRangeStayFarOff(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 2, Logger: quiet})
		y3000 := time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)
		var mu sync.Mutex // the queues' handlers run on two workers
		runs := make(map[string]int)
		inc := func(name string) int {
			mu.Lock()
			defer mu.Unlock()
			runs[name]++
			return runs[name]
		}
		count := func(name string) func(context.Context, *sched.Job[int, int]) error {
			return func(context.Context, *sched.Job[int, int]) error { inc(name); return nil }
		}

		later := must.Queue(t, s, "later", sched.QueueConfig[int, int]{Handler: count("later")})
		must.Add(t, later, 1, sched.At(y3000))
		must.Add(t, later, 2, sched.After(forever))

		snooze := must.Queue(t, s, "snooze", sched.QueueConfig[int, int]{Handler: func(context.Context, *sched.Job[int, int]) error {
			if inc("snooze") == 1 {
				return sched.Snooze(forever)
			}
			return sched.SnoozeUntil(y3000)
		}})
		must.Add(t, snooze, 1)
		must.Add(t, snooze, 2)

		retry := must.Queue(t, s, "retry", sched.QueueConfig[int, int]{
			Retry: &sched.RetryPolicy{MaxRetries: 3, Base: forever},
			Handler: func(context.Context, *sched.Job[int, int]) error {
				inc("retry")
				return context.DeadlineExceeded
			},
		})
		must.Add(t, retry, 1)

		keep := must.Queue(t, s, "keep", sched.QueueConfig[int, int]{
			Retention: &sched.Retention{Succeeded: forever, MaxSucceeded: 10},
			Handler:   count("keep"),
		})
		must.Add(t, keep, 1)

		release := make(chan struct{})
		leased := must.Queue(t, s, "leased", sched.QueueConfig[int, int]{
			Lease: forever,
			Handler: func(context.Context, *sched.Job[int, int]) error {
				inc("leased")
				<-release
				return nil
			},
		})
		must.Add(t, leased, 1)

		time.Sleep(time.Hour)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if c := must.Counts(t, later); runs["later"] != 0 || c.Delayed != 2 {
			t.Errorf("later: %d runs, counts %+v; want none run, both delayed", runs["later"], c)
		}
		if c := must.Counts(t, snooze); runs["snooze"] != 2 || c.Delayed != 2 {
			t.Errorf("snooze: %d runs, counts %+v; want one run each, both delayed", runs["snooze"], c)
		}
		if c := must.Counts(t, retry); runs["retry"] != 1 || c.Delayed != 1 {
			t.Errorf("retry: %d runs, counts %+v; want one run, a retry delayed", runs["retry"], c)
		}
		if c := must.Counts(t, keep); runs["keep"] != 1 || c.Succeeded != 1 || c.Expired != 0 {
			t.Errorf("keep: %d runs, counts %+v; want one run, kept", runs["keep"], c)
		}
		rescued, err := s.Inspector().Reap(context.Background(), time.Now(), 0)
		if err != nil || len(rescued) != 0 {
			t.Errorf("Reap of a run leased for ever: %v, %v; want nothing rescued", rescued, err)
		}
		n, err := s.Inspector().Count(context.Background(), sched.Query{From: y3000})
		if err != nil || n != 0 {
			t.Errorf("Count of entries enqueued from the year 3000: %d, %v; want 0", n, err)
		}
		close(release)
		synctest.Wait()
	})
}

// Rates at the ends of the float range work: at 1e-300 jobs a second one
// job runs (the bucket starts full) and the loops wait, and at 1e300 every
// job runs. Before, the wait for the next token at 1e-300 overflowed a
// Duration and wrapped around to 1 ns: the loops spun, and the synctest
// bubble never settled.
func TestRatesAtTheEndsOfTheFloatRange(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rate float64
		runs int
	}{{1e-300, 1}, {1e-12, 1}, {1e300, 100}} {
		synctest.Test(t, func(t *testing.T) {
			s := newScheduler(t, sched.Config{Workers: 2, Logger: quiet})
			var runs atomic.Int64
			q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Rate: tc.rate, Handler: func(context.Context, *sched.Job[int, int]) error {
				runs.Add(1)
				return nil
			}})
			for i := range 100 {
				must.Add(t, q, i)
			}
			time.Sleep(time.Minute)
			synctest.Wait()
			if n := runs.Load(); n != int64(tc.runs) {
				t.Errorf("rate %v: %d runs in a minute, want %d", tc.rate, n, tc.runs)
			}
		})
	}
}
