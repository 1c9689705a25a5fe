package sched_test

import (
	"context"
	"errors"
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

// orderLog records the keys of the runs of a queue, in order.
type orderLog struct {
	mu   sync.Mutex
	keys []int
}

func (l *orderLog) handler(ctx context.Context, j *sched.Job[int, int]) error {
	l.mu.Lock()
	l.keys = append(l.keys, j.Key)
	l.mu.Unlock()
	return nil
}

func (l *orderLog) got() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.keys)
}

// Package doc, Scheduling: "with one worker and runs of equal length d, a
// ready queue of priority p and BatchSize b waits at most (P/p·b + 2·B)·d
// for a run while a queue of priority P and BatchSize B is saturated". It
// said (P/p + 2)·d whatever the batch sizes: with the default BatchSize of
// 16 and P/p = 1 the low queue waited 330ms against a bound of 30ms.
func TestClaimStarvationBoundScalesWithTheBatches(t *testing.T) {
	for _, c := range []struct{ P, p, B, b int }{{1, 1, 16, 16}, {4, 1, 8, 2}, {4, 1, 2, 8}, {10, 1, 16, 16}, {3, 2, 5, 7}, {7, 3, 1, 1}} {
		synctest.Test(t, func(t *testing.T) {
			const d = 10 * time.Millisecond
			s := newScheduler(t, sched.Config{Workers: 1, Loops: 1})
			var high atomic.Int64
			var mu sync.Mutex
			var last time.Time
			var gap time.Duration
			qh := must.Queue(t, s, "high", sched.QueueConfig[int, int]{Handler: sleeper(d, &high), Priority: c.P, BatchSize: c.B})
			ql := must.Queue(t, s, "low", sched.QueueConfig[int, int]{Priority: c.p, BatchSize: c.b,
				Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
					mu.Lock()
					if !last.IsZero() {
						gap = max(gap, time.Since(last))
					}
					last = time.Now()
					mu.Unlock()
					time.Sleep(d)
					return nil
				}})
			fill(t, qh, 0, 5_000)
			fill(t, ql, 0, 1_000)
			time.Sleep(4 * time.Second)
			qh.Pause()
			ql.Pause()
			synctest.Wait()
			// gap runs from one start of the low queue to the next: its
			// wait, and the run before it, d.
			if bound := time.Duration(c.P*c.b/c.p+2*c.B)*d + d; gap > bound {
				t.Errorf("%+v: longest wait of the low queue between runs %v, want at most (P/p·b + 2·B)·d + d = %v", c, gap, bound)
			}
		})
	}
}

// Queue.Add's doc said "an error wrapping ErrInvalid for a nil or done
// ctx"; the package doc (Faults) says "the context's error for one that is
// done", which Add returns: Add's doc now says so.
func TestClaimAddWithDoneCtxIsCtxErr(t *testing.T) {
	s := must.New(t, sched.Config{Workers: 1})
	q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Handler: nop[int, int]})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := q.Add(ctx, 1); !errors.Is(err, context.Canceled) || errors.Is(err, sched.ErrInvalid) {
		t.Errorf("Add with a done ctx = %v, want ctx's error", err)
	}
	//lint:ignore SA1012 the nil context is the bad input under test
	if _, _, err := q.Add(nil, 1); !errors.Is(err, sched.ErrInvalid) {
		t.Errorf("Add with a nil ctx = %v, want ErrInvalid", err)
	}
}

// AddAll: "On an error, Add's for a payload [...] it returns the results of
// the payloads before: those were added." A NaN key (Add: "an invalid key
// (NaN [...])") midway: the payloads before it are added, none after.
func TestClaimAddAllStopsAtAnInvalidPayload(t *testing.T) {
	s := must.New(t, sched.Config{Workers: 1})
	q := must.Queue(t, s, "q", sched.QueueConfig[float64, float64]{Handler: nop[float64, float64]})
	out, err := q.AddAll(context.Background(), []float64{1, 2, math.NaN(), 4})
	if !errors.Is(err, sched.ErrInvalid) || len(out) != 2 || !out[0].Added || !out[1].Added {
		t.Fatalf("AddAll = %+v, %v; want the 2 results before the NaN and ErrInvalid", out, err)
	}
	if c := must.Counts(t, q); c.Added != 2 || c.Pending != 2 {
		t.Errorf("counts %+v, want 2 added and pending: nothing after the invalid payload", c)
	}
}

// AddAll "returns a result for each, in order"; a payload whose key is
// live is not an error (Add: "that entry's ID and false"), also when the
// live entry is one the same AddAll added.
func TestClaimAddAllDuplicateIsAResultNotAnError(t *testing.T) {
	s := must.New(t, sched.Config{Workers: 1})
	q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Handler: nop[int, int]})
	out, err := q.AddAll(context.Background(), []int{1, 2, 1, 3})
	if err != nil || len(out) != 4 {
		t.Fatalf("AddAll = %+v, %v", out, err)
	}
	if !out[0].Added || out[2].Added || out[2].ID != out[0].ID || !out[3].Added {
		t.Errorf("AddAll = %+v; want the third a duplicate of the first, with its ID", out)
	}
	if c := must.Counts(t, q); c.Added != 3 {
		t.Errorf("counts %+v, want 3 added", c)
	}
}

// AddAll with an invalid option (Add: "an invalid option" is ErrInvalid,
// "nothing is added then") adds nothing.
func TestClaimAddAllWithAnInvalidOptionAddsNothing(t *testing.T) {
	s := must.New(t, sched.Config{Workers: 1})
	q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Handler: nop[int, int]})
	for _, opt := range []sched.AddOption{sched.WithPriority(sched.MaxPriority + 1), sched.WithPriority(-1), {}, sched.WithRetry(sched.RetryPolicy{Jitter: 1})} {
		out, err := q.AddAll(context.Background(), []int{1, 2}, opt)
		if !errors.Is(err, sched.ErrInvalid) || len(out) != 0 {
			t.Errorf("AddAll with option %+v = %+v, %v; want nothing and ErrInvalid", opt, out, err)
		}
	}
	if c := must.Counts(t, q); c.Added != 0 {
		t.Errorf("counts %+v, want nothing added", c)
	}
}

// WithPriority: "with priority p, in [MinPriority, MaxPriority], instead of
// the queue's": both ends are accepted and win over the queue's priority,
// anything outside is ErrInvalid.
func TestClaimWithPriorityBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := must.New(t, sched.Config{Workers: 1, Loops: 1})
		var log orderLog
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Handler: log.handler, Priority: 50, BatchSize: 1})
		for _, p := range []int{sched.MinPriority - 1, sched.MaxPriority + 1, math.MinInt, math.MaxInt} {
			if _, _, err := q.Add(ctx, 9, sched.WithPriority(p)); !errors.Is(err, sched.ErrInvalid) {
				t.Errorf("Add with priority %d = %v, want ErrInvalid", p, err)
			}
		}
		must.Add(t, q, 1, sched.WithPriority(sched.MinPriority))
		must.Add(t, q, 2)
		must.Add(t, q, 3, sched.WithPriority(sched.MaxPriority))
		start(t, s, nil)
		synctest.Wait()
		if got := log.got(); !slices.Equal(got, []int{3, 2, 1}) {
			t.Errorf("runs %v, want [3 2 1]: highest priority first", got)
		}
	})
}

// After: "delayed by d (not at all if d ≤ 0)"; At: "pending at t (at once
// if t has passed)". Such entries are pending at the add, and keep their
// place among the entries added without a delay.
func TestClaimPastAtAndNonPositiveAfterArePendingAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := must.New(t, sched.Config{Workers: 1, Loops: 1})
		var log orderLog
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Handler: log.handler, BatchSize: 1})
		must.Add(t, q, 1, sched.After(-time.Hour))
		must.Add(t, q, 2)
		must.Add(t, q, 3, sched.At(time.Now().Add(-time.Hour)))
		must.Add(t, q, 4, sched.After(0))
		must.Add(t, q, 5, sched.At(time.Time{}))
		must.Add(t, q, 6, sched.At(time.Now()))
		if c := must.Counts(t, q); c.Pending != 6 || c.Delayed != 0 {
			t.Fatalf("counts %+v, want 6 pending", c)
		}
		start(t, s, nil)
		synctest.Wait()
		if got := log.got(); !slices.Equal(got, []int{1, 2, 3, 4, 5, 6}) {
			t.Errorf("runs %v, want the order of the adds", got)
		}
	})
}

// Disable: "keeps blocking adds of its key. Enable makes it dispatchable
// again (at the tail of its priority, if it is pending)."
func TestClaimEnableGoesToTheTailOfItsPriority(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := must.New(t, sched.Config{Workers: 1, Loops: 1})
		var log orderLog
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Handler: log.handler, BatchSize: 1})
		a := must.Add(t, q, 1)
		must.Add(t, q, 2)
		must.Add(t, q, 3, sched.WithPriority(2))
		must.Add(t, q, 4)
		if err := q.Disable(ctx, a); err != nil {
			t.Fatal(err)
		}
		if id, added, err := q.Add(ctx, 1); err != nil || added || id != a {
			t.Errorf("Add of a disabled entry's key = %v, %v, %v; want its ID and false", id, added, err)
		}
		if err := q.Enable(ctx, a); err != nil {
			t.Fatal(err)
		}
		start(t, s, nil)
		synctest.Wait()
		if got := log.got(); !slices.Equal(got, []int{3, 2, 4, 1}) {
			t.Errorf("runs %v, want [3 2 4 1]: the enabled entry at the tail of its priority", got)
		}
	})
}

// conserved fails t unless Counts add up: "at every moment Added =
// Live() + Retained() + Expired + Deleted".
func conserved(t *testing.T, c sched.Counts) {
	t.Helper()
	if c.Added != c.Live()+c.Retained()+c.Expired+c.Deleted {
		t.Errorf("counts %+v do not add up", c)
	}
}

// Stop: "nothing new starts, running handlers finish, claimed entries not
// started and delayed ones stay" (package doc); "entries not started yet
// go back to pending, delayed entries stay delayed" (Stop); "After Stop,
// Add returns ErrStopped" (also while Stop waits).
func TestClaimStopLeavesClaimedPendingInPlaceAndDelayedDelayed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := must.New(t, sched.Config{Workers: 1, Loops: 1})
		started, release := make(chan struct{}), make(chan struct{})
		var log orderLog
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{BatchSize: 3,
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				if j.Key == 1 {
					close(started)
					<-release
				}
				return log.handler(ctx, j)
			}})
		for k := 1; k <= 3; k++ {
			must.Add(t, q, k)
		}
		must.Add(t, q, 4, sched.After(time.Minute))
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		<-started
		stopped := make(chan error)
		go func() { stopped <- s.Stop(ctx) }()
		synctest.Wait()
		select {
		case err := <-stopped:
			t.Fatalf("Stop returned %v while a handler runs", err)
		default:
		}
		if _, _, err := q.Add(ctx, 5); !errors.Is(err, sched.ErrStopped) {
			t.Errorf("Add while Stop waits = %v, want ErrStopped", err)
		}
		if _, err := q.AddAll(ctx, []int{5}); !errors.Is(err, sched.ErrStopped) {
			t.Errorf("AddAll while Stop waits = %v, want ErrStopped", err)
		}
		c := must.Counts(t, q)
		conserved(t, c)
		if c.Running != 1 || c.Awaiting != 2 || c.Delayed != 1 {
			t.Errorf("while Stop waits: %+v, want 1 running, 2 awaiting, 1 delayed", c)
		}
		close(release)
		if err := <-stopped; err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Hour) // past the delayed entry's time
		c = must.Counts(t, q)
		conserved(t, c)
		if c.Succeeded+c.Expired != 1 || c.Pending != 2 || c.Delayed != 1 || c.Awaiting+c.Running != 0 {
			t.Errorf("after Stop: %+v, want 1 succeeded, 2 pending, 1 delayed", c)
		}
		if got := log.got(); !slices.Equal(got, []int{1}) {
			t.Errorf("runs %v, want only [1]: nothing new starts", got)
		}
		if _, err := sched.NewQueue(s, "late", sched.QueueConfig[int, int]{Handler: nop[int, int]}); !errors.Is(err, sched.ErrStopped) {
			t.Errorf("NewQueue after Stop = %v, want ErrStopped", err)
		}
	})
}

// Pause: "queued entries stay, running ones finish, nothing more of it
// starts"; Resume dispatches them again, in their order (FIFO within a
// priority: the batch's claims not started go back to their places).
func TestClaimPauseMidBatchPutsTheRestBackInPlace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 1, Loops: 1})
		started, release := make(chan struct{}), make(chan struct{})
		var log orderLog
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{BatchSize: 3,
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				if j.Key == 1 {
					close(started)
					<-release
				}
				return log.handler(ctx, j)
			}})
		q.Pause()
		for k := 1; k <= 3; k++ {
			must.Add(t, q, k)
		}
		q.Resume()
		<-started
		q.Pause()
		must.Add(t, q, 4)
		close(release)
		synctest.Wait()
		c := must.Counts(t, q)
		conserved(t, c)
		if c.Pending != 3 || c.Awaiting+c.Running != 0 {
			t.Errorf("paused: %+v, want 3 pending", c)
		}
		time.Sleep(time.Hour)
		if got := log.got(); !slices.Equal(got, []int{1}) {
			t.Errorf("paused: runs %v, want [1]", got)
		}
		q.Resume()
		synctest.Wait()
		if got := log.got(); !slices.Equal(got, []int{1, 2, 3, 4}) {
			t.Errorf("runs %v, want [1 2 3 4]", got)
		}
	})
}

// SetRate: "changes the queue's rate limit [...]. The bucket starts full."
func TestClaimSetRateStartsWithAFullBucket(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 8, Loops: 1})
		var runs atomic.Int64
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Handler: sleeper(0, &runs), Rate: 0.001, Burst: 1, BatchSize: 1})
		fill(t, q, 0, 20)
		synctest.Wait()
		if n := runs.Load(); n != 1 {
			t.Fatalf("%d runs with a burst of 1", n)
		}
		if err := q.SetRate(0.001, 5); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // no time passes
		if n := runs.Load(); n != 6 {
			t.Errorf("%d runs after SetRate(0.001, 5), want 6: the new bucket starts full", n)
		}
	})
}

// StopAndCancel "cancels the context of the running handlers, with cause
// ErrStopped".
func TestClaimStopAndCancelCauseIsErrStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := must.New(t, sched.Config{Workers: 1})
		started := make(chan struct{})
		var cause error
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
			close(started)
			<-ctx.Done()
			cause = context.Cause(ctx)
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
		if !errors.Is(cause, sched.ErrStopped) {
			t.Errorf("the handler's context's cause = %v, want ErrStopped", cause)
		}
	})
}

// QueueConfig.MaxReruns: "how many runs of an entry may end without a
// result of their own (Rerun, a shutdown) before it is poisoned". A run
// that StopAndCancel abandons (its handler ignores the cancellation) ends
// by a shutdown as much as one whose handler returns ctx's error, which
// is poisoned past the cap: so is the abandoned one.
func TestClaimAnAbandonedRunPastMaxRerunsIsPoisoned(t *testing.T) {
	for _, hang := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			ctx := context.Background()
			s := must.New(t, sched.Config{Workers: 1, Logger: quiet})
			started, release := make(chan struct{}, 2), make(chan struct{})
			keep := sched.Retention{Failed: time.Hour, MaxFailed: 10}
			q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{MaxReruns: 1, Retention: &keep,
				Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
					if j.Reruns == 0 {
						return sched.Rerun(nil)
					}
					started <- struct{}{}
					if hang {
						<-release
						return nil
					}
					<-ctx.Done()
					return ctx.Err()
				}})
			id := must.Add(t, q, 1)
			if err := s.Start(ctx); err != nil {
				t.Fatal(err)
			}
			<-started
			sctx, cancel := context.WithTimeout(ctx, time.Second)
			err := s.StopAndCancel(sctx)
			cancel()
			if hang != errors.Is(err, sched.ErrAbandoned) {
				t.Fatalf("StopAndCancel = %v", err)
			}
			e, _ := q.Get(ctx, id)
			if e.State != sched.StatePoisoned {
				t.Errorf("hung handler %v: after a Rerun and a run ended by StopAndCancel, with MaxReruns 1, the entry is %v with %d reruns; want poisoned", hang, e.State, e.Reruns)
			}
			close(release)
			synctest.Wait()
		})
	}
}
