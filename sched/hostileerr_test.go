package sched_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// nilErr is an error type whose Error dereferences its receiver: a handler
// that returns a typed nil *nilErr returns an error whose Error panics, a
// common Go mistake.
type nilErr struct{ msg string }

func (e *nilErr) Error() string { return e.msg }

// exitErr is an error whose Error ends the goroutine calling it.
type exitErr struct{}

func (exitErr) Error() string { runtime.Goexit(); return "" }

// A handler's error whose Error panics or ends the goroutine fails its
// run, with the fault in the run's error; the worker goes on, and the next
// job runs.
//
// Before, classifying the run faulted on the worker: its way out took that
// for a faulty backend, and the entry and those behind it went back to
// pending, to fault again a second later, for ever.
func TestAnErrorWhoseErrorMethodFaultsFailsItsRun(t *testing.T) {
	t.Parallel()
	cases := map[string]func() error{
		"typed nil": func() error { var e *nilErr; return e },
		"Goexit":    func() error { return exitErr{} },
	}
	for name, bad := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ran := make(chan int, 2)
			var faults atomic.Int64 // records of a fault: none, since the handler's error is no dependency
			s := newScheduler(t, sched.Config{Workers: 1, Logger: slog.New(onRecord(func(r slog.Record) {
				if r.Level >= slog.LevelError {
					faults.Add(1)
				}
			}))})
			q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
				Retry: &sched.RetryPolicy{MaxRetries: 0},
				Handler: func(_ context.Context, j *sched.Job[int, int]) error {
					defer func() { ran <- j.Payload }()
					if j.Payload == 1 {
						return bad()
					}
					return nil
				},
			})
			e := runOneAndTwo(t, s, q, ran)
			if c := must.Counts(t, q); c.Failed != 1 || c.Succeeded != 1 {
				t.Fatalf("counts %+v, want one failed and one succeeded", c)
			}
			if e.State != sched.StateFailed || len(e.Errors) != 1 {
				t.Fatalf("entry %v with errors %+v, want failed with one error", e.State, e.Errors)
			}
			if re := e.Errors[0]; !strings.Contains(re.Message, "faulted") || !strings.Contains(re.Type, "Err") {
				t.Errorf("run error %q of type %q, want the fault and the error's type", re.Message, re.Type)
			}
			if n := faults.Load(); n != 0 {
				t.Errorf("%d faults logged, want none: the error is the handler's, not a dependency's", n)
			}
		})
	}
}

// hangErr is an error whose Error hangs until release is closed.
type hangErr struct{ entered, release chan struct{} }

func (e hangErr) Error() string {
	close(e.entered)
	<-e.release
	return "hung"
}

// An error whose Error hangs holds its worker, as a hung handler does, and
// no lock: StopAndCancel still returns when its context ends. (Real time:
// see TestAHangingDelayLetsStopAndCancelReturn.)
func TestAnErrorWhoseErrorMethodHangsLetsStopAndCancelReturn(t *testing.T) {
	t.Parallel()
	e := hangErr{make(chan struct{}), make(chan struct{})}
	defer close(e.release)
	s := must.New(t, sched.Config{Workers: 1, Logger: quiet})
	q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
		Handler: func(context.Context, *sched.Job[int, int]) error { return e },
	})
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	must.Add(t, q, 1)
	<-e.entered
	if err := stopAndCancelSoon(t, s); !errors.Is(err, sched.ErrAbandoned) {
		t.Errorf("StopAndCancel = %v, want ErrAbandoned", err)
	}
}

// A metric that hangs as a run ends holds its worker and no lock:
// StopAndCancel still returns when its context ends. (Real time: see
// TestAHangingDelayLetsStopAndCancelReturn.) Before, the work-duration and
// retries metrics were called under the batch's lock.
func TestAHangingMetricLetsStopAndCancelReturn(t *testing.T) {
	t.Parallel()
	for _, which := range []string{"duration", "retries"} {
		t.Run(which, func(t *testing.T) {
			t.Parallel()
			entered, release := make(chan struct{}), make(chan struct{})
			defer close(release)
			p := &panicky{which: which, fault: func() {
				close(entered)
				<-release
			}}
			p.armed.Store(true)
			s := must.New(t, sched.Config{Workers: 1, Metrics: p, Logger: quiet})
			q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
				Retry:   &sched.RetryPolicy{MaxRetries: 1, Base: time.Hour},
				Handler: func(context.Context, *sched.Job[int, int]) error { return errors.New("fails") },
			})
			if err := s.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			must.Add(t, q, 1)
			must.Add(t, q, 2)
			<-entered
			if err := stopAndCancelSoon(t, s); !errors.Is(err, sched.ErrAbandoned) {
				t.Errorf("StopAndCancel = %v, want ErrAbandoned", err)
			}
			// The run whose metric hangs was settled before it: a retry.
			// The entry behind it goes back to pending.
			if c := must.Counts(t, q); c.Delayed != 1 || c.Pending != 1 {
				t.Errorf("counts %+v, want the settled run delayed and the other back in pending", c)
			}
		})
	}
}

// A Job the scheduler did not make, as a handler's unit test makes one,
// has no run: Progress and Heartbeat return ErrStale. Before, they
// dereferenced a nil batch.
func TestAJobNotTheSchedulersHasNoRun(t *testing.T) {
	t.Parallel()
	j := &sched.Job[int, int]{ID: 1, Payload: 7}
	if err := j.Progress(context.Background(), sched.Progress{Done: 1, Total: 2}); !errors.Is(err, sched.ErrStale) {
		t.Errorf("Progress = %v, want ErrStale", err)
	}
	if err := j.Heartbeat(context.Background()); !errors.Is(err, sched.ErrStale) {
		t.Errorf("Heartbeat = %v, want ErrStale", err)
	}
}

// The outcome errors built by hand (without their constructors, with no
// error inside, or typed nils) classify as their constructors' would:
// before, their Error or the snooze's time dereferenced nil, and the run
// failed as an error that faulted.
func TestHandBuiltOutcomeErrorsClassifyAsTheirConstructors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		err   error
		state sched.State
		runs  int
	}{
		{"PermanentError{}", &sched.PermanentError{}, sched.StateFailed, 1},
		{"nil *PermanentError", (*sched.PermanentError)(nil), sched.StateFailed, 1},
		{"CancelError{}", &sched.CancelError{}, sched.StateCancelled, 1},
		{"nil *CancelError", (*sched.CancelError)(nil), sched.StateCancelled, 1},
		{"RerunError{}", &sched.RerunError{}, sched.StatePoisoned, 2},         // MaxReruns 1
		{"nil *RerunError", (*sched.RerunError)(nil), sched.StatePoisoned, 2}, // MaxReruns 1
		{"SnoozeError{After: -1h}", &sched.SnoozeError{After: -time.Hour}, sched.StateSucceeded, 2},
		{"nil *SnoozeError", (*sched.SnoozeError)(nil), sched.StateSucceeded, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
				keep := sched.Retention{Succeeded: time.Hour, MaxSucceeded: 10, Failed: time.Hour, MaxFailed: 10, Cancelled: time.Hour, MaxCancelled: 10}
				runs := 0
				q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
					Retry: &sched.RetryPolicy{MaxRetries: 3, Base: time.Second}, MaxReruns: 1, Retention: &keep,
					Handler: func(context.Context, *sched.Job[int, int]) error {
						runs++
						if runs == 1 || tc.state == sched.StatePoisoned {
							return tc.err
						}
						return nil
					},
				})
				id := must.Add(t, q, 1)
				time.Sleep(time.Minute)
				synctest.Wait()
				e, err := q.Get(context.Background(), id)
				if err != nil {
					t.Fatal(err)
				}
				if e.State != tc.state || runs != tc.runs {
					t.Fatalf("%v after %d runs, want %v after %d", e.State, runs, tc.state, tc.runs)
				}
				for _, re := range e.Errors {
					if strings.Contains(re.Message, "faulted") {
						t.Errorf("run error %q: the error faulted as it was classified", re.Message)
					}
				}
			})
		})
	}
}

// cycleErr wraps itself; if recurse, its Error formats what it wraps, so
// that calling it overflows the stack, which nothing can recover.
type cycleErr struct{ recurse bool }

func (e *cycleErr) Unwrap() error { return e }
func (e *cycleErr) Error() string {
	if e.recurse {
		return "cycle: " + e.Unwrap().Error()
	}
	return "cycle"
}

// chainErr is a chain of n errors, built as a tree of joins at the end.
func chainErr(n int) error {
	err := errors.New("root")
	for range n - 1 {
		err = fmt.Errorf("wrap: %w", err)
	}
	return errors.Join(errors.New("other"), err)
}

// A handler's error that wraps itself, or more than a thousand errors,
// fails its run at once, not retried, and the worker goes on. Before,
// errors.As walked the cycle for ever on the worker: a core burnt and a
// worker lost for good (and, for the one whose Error recurses, a stack
// overflow, which crashes the process, once its message was taken).
func TestAnErrorThatWrapsItselfFailsItsRun(t *testing.T) {
	t.Parallel()
	for name, bad := range map[string]error{
		"cycle":            &cycleErr{},
		"recursive Error":  &cycleErr{recurse: true},
		"a chain of 5,000": chainErr(5000),
		"cycle in a join":  errors.Join(errors.New("fine"), &cycleErr{}),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := must.New(t, sched.Config{Workers: 1, Logger: quiet})
			ran := make(chan int, 2)
			q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
				Handler: func(_ context.Context, j *sched.Job[int, int]) error {
					ran <- j.Payload
					if j.Payload == 1 {
						return bad
					}
					return nil
				},
			})
			if err := s.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			e := runOneAndTwo(t, s, q, ran)
			if e.State != sched.StateFailed || len(e.Errors) != 1 || !strings.Contains(e.Errors[0].Message, "wraps more than") {
				t.Fatalf("entry %v with errors %+v, want failed, not classified", e.State, e.Errors)
			}
		})
	}
}

// runOneAndTwo adds jobs 1 and 2 to q, whose handler sends each payload it
// runs on ran, waits for both to run (the test fails if one has not run
// 10 s on: a worker stuck), stops s, which waits for the runs to settle,
// and returns the entry of job 1.
func runOneAndTwo(t *testing.T, s *sched.Scheduler, q *sched.Queue[int, int], ran <-chan int) sched.Entry[int, int] {
	t.Helper()
	id := must.Add(t, q, 1)
	must.Add(t, q, 2)
	for range 2 {
		select {
		case <-ran:
		case <-time.After(10 * time.Second):
			t.Fatal("a job did not run 10 s on: its worker is stuck")
		}
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	e, err := q.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// cyclingBackend is a backend whose Start, the first time for each entry,
// fails without starting it, and whose Settle settles and then fails, each
// with an error that wraps itself.
type cyclingBackend struct {
	sched.Backend[int, int]
	failed  map[sched.ID]bool // guarded by the one worker
	settles atomic.Int64
}

func (b *cyclingBackend) Start(ctx context.Context, c *sched.Claim[int, int], now, leaseUntil time.Time) error {
	if !b.failed[c.ID] {
		b.failed[c.ID] = true
		return &cycleErr{}
	}
	return b.Backend.Start(ctx, c, now, leaseUntil)
}

func (b *cyclingBackend) Settle(ctx context.Context, c *sched.Claim[int, int], o sched.Outcome) error {
	if err := b.Backend.Settle(ctx, c, o); err != nil {
		return err
	}
	b.settles.Add(1)
	return &cycleErr{}
}

// A custom backend's error that wraps itself is not searched for ErrStale:
// the entry whose Start failed runs later, the run whose Settle failed is
// settled, and the worker goes on. Before, errors.Is walked the cycle for
// ever on the worker, under the batch's lock.
func TestABackendErrorThatWrapsItselfStrandsNothing(t *testing.T) {
	t.Parallel()
	s := must.New(t, sched.Config{Workers: 1, Logger: quiet})
	b := &cyclingBackend{Backend: sched.NewMemory[int, int](), failed: make(map[sched.ID]bool)}
	ran := make(chan int, 2)
	q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
		Backend: b,
		Handler: func(_ context.Context, j *sched.Job[int, int]) error {
			ran <- j.Payload
			return nil
		},
	})
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if e := runOneAndTwo(t, s, q, ran); e.State != sched.StateSucceeded {
		t.Errorf("job 1 is %v, want succeeded", e.State)
	}
	if n := b.settles.Load(); n != 2 {
		t.Errorf("%d runs settled, want 2", n)
	}
}
