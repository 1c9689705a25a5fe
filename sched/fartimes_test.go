package sched_test

import (
	"context"
	"math"
	"slices"
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

// startsAt is a Clock that reads base when it is made and moves with the
// time of the test's synctest bubble; its timers are the system clock's
// (the bubble's, made in it), which a scheduler with the default Clock
// lends.
type startsAt struct {
	sched.Clock
	base, made time.Time
}

func newStartsAt(t *testing.T, base time.Time) *startsAt {
	return &startsAt{Clock: must.New(t, sched.Config{}).Clock(), base: base, made: time.Now()}
}

func (c *startsAt) Now() time.Time { return c.base.Add(time.Since(c.made)) }

// A Clock may start anywhere: in the year 1, just after the zero
// time.Time (which the scheduler takes for "no time"), before 1970, or far
// on. Delays, retries, retention and the queue's summary work there as
// they do now. Before, with instants kept as unix nanoseconds, those of
// the year 1 saturated: an entry added for an hour later ran at once.
func TestAClockMayStartAnywhere(t *testing.T) {
	t.Parallel()
	for _, base := range []time.Time{
		time.Time{}.Add(time.Hour),
		time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2900, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		t.Run(base.Format("2006"), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				clock := newStartsAt(t, base)
				s := newScheduler(t, sched.Config{Workers: 2, Logger: quiet, Clock: clock})
				var mu sync.Mutex
				var ran []time.Time // the clock's time at each run
				q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
					Retry:     &sched.RetryPolicy{MaxRetries: 1, Base: time.Minute},
					Retention: &sched.Retention{Succeeded: 24 * time.Hour, MaxSucceeded: 10},
					Handler: func(_ context.Context, j *sched.Job[int, int]) error {
						mu.Lock()
						defer mu.Unlock()
						ran = append(ran, clock.Now())
						if j.Payload == 2 && j.Attempt == 1 {
							return context.DeadlineExceeded
						}
						return nil
					},
				})
				id := must.Add(t, q, 1, sched.After(time.Hour))
				must.Add(t, q, 2)
				time.Sleep(2 * time.Hour)
				synctest.Wait()
				mu.Lock()
				got := slices.Clone(ran)
				mu.Unlock()
				want := []time.Time{base, base.Add(time.Minute), base.Add(time.Hour)}
				if !slices.EqualFunc(got, want, time.Time.Equal) {
					t.Errorf("runs at %v, want %v", got, want)
				}
				e, err := q.Get(context.Background(), id)
				if err != nil || !e.EnqueuedAt.Equal(base) || !e.FinishedAt.Equal(base.Add(time.Hour)) {
					t.Errorf("entry enqueued at %v, finished at %v (%v); want %v and an hour later", e.EnqueuedAt, e.FinishedAt, err, base)
				}
				must.Add(t, q, 3)
				synctest.Wait()
				sum, err := s.Inspector().Summary(context.Background(), "q")
				if err != nil || sum.Succeeded != 1 || sum.Counts.Succeeded != 3 {
					t.Errorf("summary %+v, %v; want 1 success in the last minute, 3 kept", sum, err)
				}
			})
		})
	}
}
