package sched_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// recorder is a handler that records the start of every run and returns
// what script says for the run number (from 0).
type recorder struct {
	mu     sync.Mutex
	starts []time.Time
	script func(run int, j *sched.Job[int, int]) error
}

func (r *recorder) handle(ctx context.Context, j *sched.Job[int, int]) error {
	r.mu.Lock()
	n := len(r.starts)
	r.starts = append(r.starts, time.Now())
	r.mu.Unlock()
	return r.script(n, j)
}

// offsets returns the starts as offsets from t0.
func (r *recorder) offsets(t0 time.Time) []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]time.Duration, len(r.starts))
	for i, s := range r.starts {
		out[i] = s.Sub(t0)
	}
	return out
}

// entryOf returns the only entry of q.
func entryOf(t *testing.T, s *sched.Scheduler, queue string) sched.Summary {
	t.Helper()
	var out []sched.Summary
	for e, err := range s.Inspector().List(context.Background(), sched.Query{Queues: []string{queue}}) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	if len(out) != 1 {
		t.Fatalf("queue %s has %d entries, want 1", queue, len(out))
	}
	return out[0]
}

// A failing job runs at σ(0) = t₀, σ(n+1) = σ(n) + c·2ⁿ while r < M, then
// fails with M+1 attempts, for several c and M, with runs that take time.
func TestRetriesFollowTheSchedule(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		c    time.Duration
		m    int
		work time.Duration
	}{{time.Second, 3, 0}, {100 * time.Millisecond, 5, 30 * time.Millisecond}, {time.Minute, 0, 0}, {time.Hour, 1, time.Second}} {
		t.Run(fmt.Sprintf("c=%v/M=%d", tc.c, tc.m), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				s := newScheduler(t, sched.Config{Workers: 2})
				r := &recorder{script: func(int, *sched.Job[int, int]) error {
					time.Sleep(tc.work)
					return errors.New("still broken")
				}}
				q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Handler: r.handle, Retry: &sched.RetryPolicy{MaxRetries: tc.m, Base: tc.c}})
				t0 := time.Now()
				must.Add(t, q, 1)
				time.Sleep(tc.c << (tc.m + 1))
				synctest.Wait()
				var want []time.Duration
				for n, sigma := 0, time.Duration(0); n <= tc.m; n++ {
					want = append(want, sigma)
					sigma += tc.c << n
				}
				if got := r.offsets(t0); !slices.Equal(got, want) {
					t.Errorf("runs at %v, want %v", got, want)
				}
				e := entryOf(t, s, "q")
				if e.State != sched.StateFailed || e.Attempts != tc.m+1 || len(e.Errors) != min(tc.m+1, sched.MaxErrors) {
					t.Errorf("entry %v with %d attempts and %d errors, want failed with %d", e.State, e.Attempts, len(e.Errors), tc.m+1)
				}
			})
		})
	}
}

func TestOutcomeClasses(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 4})
		keep := sched.Retention{Succeeded: time.Hour, MaxSucceeded: 100, Failed: time.Hour, MaxFailed: 100, Cancelled: time.Hour, MaxCancelled: 100}
		policy := sched.RetryPolicy{MaxRetries: 2, Base: time.Second}
		queue := func(name string, script func(run int, j *sched.Job[int, int]) error, maxReruns int) *recorder {
			r := &recorder{script: script}
			q := must.Queue(t, s, name, sched.QueueConfig[int, int]{Handler: r.handle, Retry: &policy, Retention: &keep, MaxReruns: maxReruns})
			must.Add(t, q, 1)
			return r
		}
		permanent := queue("permanent", func(int, *sched.Job[int, int]) error {
			return fmt.Errorf("loading: %w", sched.Permanent(errors.New("no such file")))
		}, 0)
		// Snoozes and reruns spend no attempt: three of each, then the job
		// still has its two retries.
		var attempts []int
		mixed := queue("mixed", func(run int, j *sched.Job[int, int]) error {
			attempts = append(attempts, j.Attempt)
			switch {
			case run < 3:
				return sched.Snooze(time.Second)
			case run < 6:
				return sched.Rerun(errors.New("worker shutting down"))
			}
			return errors.New("fails")
		}, 5)
		poison := queue("poison", func(int, *sched.Job[int, int]) error { return sched.Rerun(nil) }, 3)
		cancelled := queue("cancel", func(int, *sched.Job[int, int]) error { return sched.Cancel(errors.New("user gave up")) }, 0)
		panicky := queue("panic", func(run int, j *sched.Job[int, int]) error {
			if run == 0 {
				panic(fmt.Sprintf("bad state %d", j.Key))
			}
			return nil
		}, 0)
		time.Sleep(time.Minute)
		synctest.Wait()

		check := func(name string, r *recorder, runs int, state sched.State, attempts int) sched.Summary {
			t.Helper()
			e := entryOf(t, s, name)
			if n := len(r.offsets(time.Time{})); n != runs || e.State != state || e.Attempts != attempts {
				t.Errorf("%s: %d runs, %v with %d attempts; want %d runs, %v with %d", name, n, e.State, e.Attempts, runs, state, attempts)
			}
			return e
		}
		e := check("permanent", permanent, 1, sched.StateFailed, 1)
		if err := e.Errors[0]; err.Type != "*fmt.wrapError" || !slices.Contains(err.Chain, "*sched.PermanentError") {
			t.Errorf("the permanent failure keeps %+v, want its chain", err)
		}
		e = check("mixed", mixed, 9, sched.StateFailed, 3)
		if e.Snoozes != 3 || e.Reruns != 3 {
			t.Errorf("mixed: %d snoozes, %d reruns; want 3 and 3", e.Snoozes, e.Reruns)
		}
		if !slices.Equal(attempts, []int{1, 1, 1, 1, 1, 1, 1, 2, 3}) {
			t.Errorf("mixed ran as attempts %v", attempts)
		}
		e = check("poison", poison, 4, sched.StatePoisoned, 0) // MaxReruns 3: the fourth rerun poisons
		if e.Reruns != 3 || len(e.Errors) != 1 {
			t.Errorf("poison: %d reruns, errors %+v", e.Reruns, e.Errors)
		}
		check("cancel", cancelled, 1, sched.StateCancelled, 1)
		e = check("panic", panicky, 2, sched.StateSucceeded, 2)
		if p := e.Errors[0]; !p.Panic || p.Message != "bad state 1" || len(p.Stack) == 0 {
			t.Errorf("the panic is kept as %+v, want its value and stack", p)
		}
	})
}

// Jitter spreads delays within ±Jitter of the schedule, MaxDelay caps them,
// and a Delay function replaces the schedule.
func TestRetryDelays(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 64})
		jittered := &recorder{script: func(int, *sched.Job[int, int]) error { return errors.New("x") }}
		q := must.Queue(t, s, "jitter", sched.QueueConfig[int, int]{Handler: jittered.handle,
			Retry: &sched.RetryPolicy{MaxRetries: 1, Base: 10 * time.Second, Jitter: 0.5}})
		t0 := time.Now()
		for i := range 200 {
			must.Add(t, q, i)
		}
		capped := &recorder{script: func(int, *sched.Job[int, int]) error { return errors.New("x") }}
		qc := must.Queue(t, s, "capped", sched.QueueConfig[int, int]{Handler: capped.handle,
			Retry: &sched.RetryPolicy{MaxRetries: 4, Base: time.Second, MaxDelay: 3 * time.Second}})
		must.Add(t, qc, 1)
		custom := &recorder{script: func(int, *sched.Job[int, int]) error { return errors.New("x") }}
		qf := must.Queue(t, s, "custom", sched.QueueConfig[int, int]{Handler: custom.handle,
			Retry: &sched.RetryPolicy{MaxRetries: 3, Delay: func(attempt int, err error) time.Duration {
				return time.Duration(attempt) * time.Minute
			}}})
		must.Add(t, qf, 1)
		time.Sleep(time.Hour)
		synctest.Wait()
		var retries []time.Duration
		for _, o := range jittered.offsets(t0) {
			if o > 0 {
				retries = append(retries, o)
			}
		}
		slices.Sort(retries)
		if len(retries) != 200 || retries[0] < 5*time.Second || retries[199] > 15*time.Second || retries[0] == retries[199] {
			t.Errorf("jittered retries from %v to %v (%d), want 200 spread over [5s, 15s]", retries[0], retries[len(retries)-1], len(retries))
		}
		if got, want := capped.offsets(t0), []time.Duration{0, time.Second, 3 * time.Second, 6 * time.Second, 9 * time.Second}; !slices.Equal(got, want) {
			t.Errorf("capped delays: runs at %v, want %v", got, want)
		}
		if got, want := custom.offsets(t0), []time.Duration{0, time.Minute, 3 * time.Minute, 6 * time.Minute}; !slices.Equal(got, want) {
			t.Errorf("custom delays: runs at %v, want %v", got, want)
		}
	})
}

// A run whose context StopAndCancel cancelled ends as a rerun: no attempt
// spent, pending again for the next start.
func TestStopAndCancelReruns(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, err := sched.New(sched.Config{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		started := make(chan struct{})
		q := must.Queue(t, s, "long", sched.QueueConfig[int, int]{Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
			close(started)
			<-ctx.Done()
			return ctx.Err()
		}})
		must.Add(t, q, 1)
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		<-started
		if err := s.StopAndCancel(ctx); err != nil {
			t.Fatal(err)
		}
		e := entryOf(t, s, "long")
		if e.State != sched.StatePending || e.Attempts != 0 || e.Reruns != 1 {
			t.Errorf("after StopAndCancel: %v, %d attempts, %d reruns; want pending, 0, 1", e.State, e.Attempts, e.Reruns)
		}
	})
}

// Final entries are kept for their retention, exactly, then deleted.
func TestRetentionExpiresAtTheTTL(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 2})
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				if j.Payload == 2 {
					return sched.Permanent(nil)
				}
				return nil
			},
			Retention: &sched.Retention{Succeeded: 10 * time.Second, MaxSucceeded: 10, Failed: time.Minute, MaxFailed: 10},
		})
		ok, failed := must.Add(t, q, 1), must.Add(t, q, 2)
		synctest.Wait()
		t0 := time.Now()
		exists := func(id sched.ID) bool {
			_, err := q.Get(context.Background(), id)
			return err == nil
		}
		time.Sleep(10*time.Second - 1)
		if !exists(ok) {
			t.Error("the succeeded entry is gone before its 10s")
		}
		time.Sleep(time.Nanosecond) // to the TTL exactly
		synctest.Wait()
		if exists(ok) || !exists(failed) {
			t.Errorf("at %v: succeeded kept %v, failed kept %v; want false, true", time.Since(t0), exists(ok), exists(failed))
		}
		time.Sleep(50 * time.Second)
		synctest.Wait()
		if exists(failed) {
			t.Error("the failed entry outlived its minute")
		}
		if c := must.Counts(t, q); c.Expired != 2 || c.Added != 2 || c.Live()+c.Retained() != 0 {
			t.Errorf("counts %+v, want both expired", c)
		}
	})
}

// A retry policy whose Delay panics, or ends its goroutine
// (runtime.Goexit), does not crash or strand a worker: the entry fails,
// saying why, nothing stays live, and the queue goes on.
func TestPanickingDelayFailsTheEntry(t *testing.T) {
	t.Parallel()
	for name, fault := range map[string]func(){"panic": func() { panic("bad delay") }, "Goexit": runtime.Goexit} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newScheduler(t, sched.Config{Workers: 1})
				var runs atomic.Int64
				q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
					Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
						runs.Add(1)
						if j.Payload == 1 {
							return errors.New("fails")
						}
						return nil
					},
					Retention: &sched.Retention{Failed: time.Hour, MaxFailed: 10, Succeeded: time.Hour, MaxSucceeded: 10},
					Retry: &sched.RetryPolicy{MaxRetries: 3, Delay: func(int, error) time.Duration {
						fault()
						return time.Second
					}},
				})
				id := must.Add(t, q, 1)
				must.Add(t, q, 2)
				synctest.Wait()
				e, err := q.Get(context.Background(), id)
				if err != nil || e.State != sched.StateFailed || runs.Load() != 2 || !strings.Contains(e.Errors[0].Message, "Delay panicked or ended its goroutine") {
					t.Errorf("entry %+v, %v after %d runs; want failed, saying the Delay failed, and the other run", e, err, runs.Load())
				}
				if c := must.Counts(t, q); c.Live() != 0 {
					t.Errorf("counts %+v, want nothing live", c)
				}
			})
		})
	}
}
