package sched_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// Every exported method that takes a context returns an error wrapping
// ErrInvalid for a nil one, and the context's error for one that is done,
// and changes nothing. Before, five of the Inspector's dereferenced a nil
// context, and the reads and Disable, Enable ignored a done one.
func TestEveryMethodRefusesANilOrDoneContext(t *testing.T) {
	t.Parallel()
	s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
	q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Handler: nop[int, int]})
	q.Pause()
	id := must.Add(t, q, 1)
	in := s.Inspector()
	calls := map[string]func(context.Context) error{
		"Queue.Add":     func(ctx context.Context) error { _, _, err := q.Add(ctx, 2); return err },
		"Queue.AddAll":  func(ctx context.Context) error { _, err := q.AddAll(ctx, []int{2}); return err },
		"Queue.Disable": func(ctx context.Context) error { return q.Disable(ctx, id) },
		"Queue.Enable":  func(ctx context.Context) error { return q.Enable(ctx, id) },
		"Queue.Counts":  func(ctx context.Context) error { _, err := q.Counts(ctx); return err },
		"Queue.Get":     func(ctx context.Context) error { _, err := q.Get(ctx, id); return err },
		"Inspector.List": func(ctx context.Context) error {
			for _, err := range in.List(ctx, sched.Query{}) {
				if err != nil {
					return err
				}
			}
			return nil
		},
		"Inspector.Count":     func(ctx context.Context) error { _, err := in.Count(ctx, sched.Query{}); return err },
		"Inspector.Get":       func(ctx context.Context) error { _, err := in.Get(ctx, "q", id); return err },
		"Inspector.Delete":    func(ctx context.Context) error { _, err := in.Delete(ctx, sched.Query{}); return err },
		"Inspector.Retry":     func(ctx context.Context) error { _, err := in.Retry(ctx, sched.Query{}, true); return err },
		"Inspector.RetryID":   func(ctx context.Context) error { return in.RetryID(ctx, "q", id, true) },
		"Inspector.DeleteID":  func(ctx context.Context) error { return in.DeleteID(ctx, "q", id) },
		"Inspector.Disable":   func(ctx context.Context) error { return in.Disable(ctx, "q", id) },
		"Inspector.Enable":    func(ctx context.Context) error { return in.Enable(ctx, "q", id) },
		"Inspector.Summaries": func(ctx context.Context) error { _, err := in.Summaries(ctx); return err },
		"Inspector.Summary":   func(ctx context.Context) error { _, err := in.Summary(ctx, "q"); return err },
		"Inspector.Reap":      func(ctx context.Context) error { _, err := in.Reap(ctx, time.Now(), 0); return err },
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for name, call := range calls {
		if err := call(nil); !errors.Is(err, sched.ErrInvalid) {
			t.Errorf("%s with a nil context: %v, want ErrInvalid", name, err)
		}
		if err := call(done); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a done context: %v, want context.Canceled", name, err)
		}
	}
	if c := must.Counts(t, q); c.Pending != 1 || c.Disabled != 0 || c.Added != 1 {
		t.Errorf("counts %+v, want the one entry pending and enabled, as it was", c)
	}
}

// errNotMade stands for the error of a call that returns none.
var errNotMade = fmt.Errorf("%w: stands for a call that returns no error", sched.ErrInvalid)

// A Scheduler not made by New (a nil pointer, or the zero Scheduler) is
// an error wrapping ErrInvalid wherever it is used, at once. Before, the
// zero Scheduler's Start waited for ever, and the nil one's methods
// dereferenced it.
func TestASchedulerNotMadeByNewIsAnError(t *testing.T) {
	t.Parallel()
	for name, s := range map[string]*sched.Scheduler{"nil": nil, "zero": {}} {
		calls := map[string]func() error{
			"Start":         func() error { return s.Start(context.Background()) },
			"Stop":          func() error { return s.Stop(context.Background()) },
			"StopAndCancel": func() error { return s.StopAndCancel(context.Background()) },
			"NewQueue": func() error {
				_, err := sched.NewQueue(s, "q", sched.QueueConfig[int, int]{Handler: nop[int, int]})
				return err
			},
			"Inspector.Count": func() error { _, err := s.Inspector().Count(context.Background(), sched.Query{}); return err },
			"Inspector.Pause": func() error { return s.Inspector().Pause("q") },
			"Inspector.Abandoned": func() error {
				if n := s.Inspector().Abandoned(); n != 0 {
					return fmt.Errorf("%d abandoned", n)
				}
				return errNotMade
			},
			"Inspector.EnableRescue": func() error {
				s.Inspector().EnableRescue() // does nothing
				return errNotMade
			},
		}
		for call, f := range calls {
			got := make(chan error, 1)
			go func() { got <- f() }()
			select {
			case err := <-got:
				if !errors.Is(err, sched.ErrInvalid) {
					t.Errorf("%s Scheduler's %s: %v, want ErrInvalid", name, call, err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s Scheduler's %s has not returned in 10 s", name, call)
			}
		}
	}
}

// A zero Memory is a backend, as NewMemory's is: NewQueue opens it.
// Before, its first Add dereferenced its nil key index.
func TestAZeroMemoryIsABackend(t *testing.T) {
	t.Parallel()
	s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
	ran := make(chan int, 1)
	q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
		Backend: &sched.Memory[int, int]{},
		Handler: func(_ context.Context, j *sched.Job[int, int]) error { ran <- j.Payload; return nil },
	})
	must.Add(t, q, 7)
	if got := <-ran; got != 7 {
		t.Errorf("ran %d, want 7", got)
	}
	var m sched.Memory[int, int]
	if _, _, err := m.Add(context.Background(), sched.NewEntry[int, int]{Key: 1}); !errors.Is(err, sched.ErrInvalid) {
		t.Errorf("Add to a zero Memory never opened: %v, want ErrInvalid", err)
	}
}

// A Queue not made by NewQueue (a nil pointer, or the zero Queue) is an
// error wrapping ErrInvalid wherever a method returns one; Pause and
// Resume of the zero Queue do nothing. Before, Add dereferenced its nil
// scheduler.
func TestAQueueNotMadeByNewQueueIsAnError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for name, q := range map[string]*sched.Queue[int, int]{"nil": nil, "zero": {}} {
		calls := map[string]func() error{
			"Add":               func() error { _, _, err := q.Add(ctx, 1); return err },
			"AddAll":            func() error { _, err := q.AddAll(ctx, []int{1}); return err },
			"Disable":           func() error { return q.Disable(ctx, 1) },
			"Enable":            func() error { return q.Enable(ctx, 1) },
			"Counts":            func() error { _, err := q.Counts(ctx); return err },
			"Get":               func() error { _, err := q.Get(ctx, 1); return err },
			"SetMaxConcurrency": func() error { return q.SetMaxConcurrency(1) },
			"SetRate":           func() error { return q.SetRate(1, 1) },
		}
		for call, f := range calls {
			if err := f(); !errors.Is(err, sched.ErrInvalid) {
				t.Errorf("%s Queue's %s: %v, want ErrInvalid", name, call, err)
			}
		}
	}
	var q sched.Queue[int, int]
	q.Pause()
	q.Resume()
	if q.Paused() {
		t.Error("the zero Queue is paused after Resume")
	}
}
