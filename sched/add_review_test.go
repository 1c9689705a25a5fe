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

// WithRetry takes a RetryPolicy by value ("a policy is a value"), and an
// AddOption is a value: a caller that reuses its own slice of options after
// Add returns does not change the policy of the entry already added.
// Before, the entry kept a pointer into the caller's slice.
func TestWithRetryIsCopiedAtAdd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := must.New(t, sched.Config{Workers: 1})
		keep := sched.Retention{Succeeded: time.Hour, MaxSucceeded: 10, Failed: time.Hour, MaxFailed: 10, Cancelled: time.Hour, MaxCancelled: 10}
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Handler:   func(context.Context, *sched.Job[int, int]) error { return errors.New("boom") },
			Retention: &keep,
		})
		opts := []sched.AddOption{sched.WithRetry(sched.NoRetry)}
		id, _, err := q.Add(ctx, 1, opts...)
		if err != nil {
			t.Fatal(err)
		}
		// The caller reuses its slice for another add.
		opts[0] = sched.WithRetry(sched.RetryPolicy{MaxRetries: 1000, Base: time.Hour})
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer s.Stop(ctx)
		synctest.Wait()
		e, err := q.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if e.State != sched.StateFailed || e.Attempts != 1 {
			t.Errorf("entry added with NoRetry is %v after %d attempts: it took the policy written into the caller's slice after Add returned", e.State, e.Attempts)
		}
	})
}

// DelayAfter is exported; an attempt number below 1 is a caller's mistake,
// taken as the first. Before, it panicked: a shift by a negative count.
func TestDelayAfterOfAttemptZeroDoesNotPanic(t *testing.T) {
	for _, attempt := range []int{0, -1, -1 << 62} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("DelayAfter(%d) panicked: %v", attempt, r)
				}
			}()
			p := sched.RetryPolicy{MaxRetries: 3, Base: time.Second}
			p.DelayAfter(attempt, errors.New("x"))
		}()
	}
}

// An AddAll under way when the scheduler stops returns ErrStopped, as Add
// does "once the scheduler was stopped", with the results of what it
// added. Before, it checked only once, at its start, and went on adding
// every later payload after Stop had returned.
func TestAddAllStopsAddingOnceStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := must.New(t, sched.Config{Workers: 1})
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		stopped := false
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Handler: nop[int, int],
			Key: func(v int) int {
				if v == 2 && !stopped {
					stopped = true
					if err := s.Stop(ctx); err != nil {
						t.Error(err)
					}
				}
				return v
			},
		})
		out, err := q.AddAll(ctx, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, sched.After(time.Hour))
		c := must.Counts(t, q)
		if c.Added != len(out) {
			t.Errorf("AddAll returned %d results, but %d entries were added", len(out), c.Added)
		}
		if !errors.Is(err, sched.ErrStopped) || len(out) > 2 {
			t.Errorf("AddAll across a Stop returned %d results and error %v; want at most the 2 added before Stop and ErrStopped (an Add after Stop returns ErrStopped)", len(out), err)
		}
	})
}

// AddAll under a ctx that ends midway stops there, with ctx's error and
// the results of what it added. Before, it went on to the end: the ctx was
// looked at once, before the first payload.
func TestAddAllStopsWhenCtxEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s := must.New(t, sched.Config{Workers: 1})
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Handler: nop[int, int],
			Key: func(v int) int {
				if v == 2 {
					cancel()
				}
				return v
			},
		})
		out, err := q.AddAll(ctx, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
		c := must.Counts(t, q)
		if c.Added != len(out) {
			t.Errorf("AddAll returned %d results, but %d entries were added", len(out), c.Added)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("AddAll whose ctx was cancelled at payload 2 of 10 returned %d results and error %v; want context.Canceled", len(out), err)
		}
	})
}

// Many goroutines add one key at once, across BlockFailed failures, with
// Stop racing: one accepted per live period, the others told its ID, and
// the counts add up.
func TestConcurrentAddsOfOneKey(t *testing.T) {
	ctx := context.Background()
	s := must.New(t, sched.Config{Workers: 2})
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
		Handler: func(context.Context, *sched.Job[int, int]) error { return errors.New("x") },
		Retry:   &sched.NoRetry, BlockFailed: true,
		Retention: &sched.Retention{Succeeded: time.Hour, MaxSucceeded: 10, Failed: time.Hour, MaxFailed: 10, Cancelled: time.Hour, MaxCancelled: 10},
	})
	const n = 64
	ids := make(chan sched.ID, 3*n)
	added := make(chan sched.ID, n)
	start := make(chan struct{})
	done := make(chan struct{})
	for range n {
		go func() {
			defer func() { done <- struct{}{} }()
			<-start
			r, err := q.AddAll(ctx, []int{7, 7, 7})
			if err != nil {
				t.Error(err)
				return
			}
			for _, x := range r {
				ids <- x.ID
				if x.Added {
					added <- x.ID
				}
			}
		}()
	}
	close(start)
	for range n {
		<-done
	}
	close(ids)
	close(added)
	if len(added) != 1 {
		t.Fatalf("%d adds accepted, want 1", len(added))
	}
	a := <-added
	for id := range ids {
		if id != a {
			t.Errorf("told ID %d, want %d", id, a)
		}
	}
	c := must.Counts(t, q)
	if c.Added != c.Live()+c.Retained()+c.Expired+c.Deleted {
		t.Errorf("counts %+v do not add up", c)
	}
	_ = s.Stop(ctx)
}

// Memory, a public Backend, refuses an entry's Priority outside
// [MinPriority, MaxPriority] with ErrInvalid, as it does a NaN key. Before,
// such a priority indexed its levels out of range, a panic; and 0 queued
// the entry at the level that means "not queued", never to be taken.
func TestMemoryAddRefusesAPriorityOutOfRange(t *testing.T) {
	for _, p := range []int{sched.MaxPriority + 1, -1, sched.MinPriority - 1} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("Memory.Add with Priority %d panicked: %v", p, r)
				}
			}()
			m := sched.NewMemory[int, int]()
			if err := m.Open(sched.QueueInfo{Name: "q"}); err != nil {
				t.Fatal(err)
			}
			now := time.Now()
			_, _, err := m.Add(context.Background(), sched.NewEntry[int, int]{Key: 1, Priority: p, Now: now})
			if !errors.Is(err, sched.ErrInvalid) {
				t.Errorf("Memory.Add with Priority %d: %v, want ErrInvalid", p, err)
			}
		}()
	}
}
