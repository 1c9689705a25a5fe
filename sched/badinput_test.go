package sched_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

func TestBadConfigIsAnError(t *testing.T) {
	t.Parallel()
	for _, cfg := range []sched.Config{
		{Loops: -1}, {Loops: 65}, {Workers: -1}, {Workers: 1 << 21},
		{Retention: &sched.Retention{Succeeded: -1}},
	} {
		if _, err := sched.New(cfg); !errors.Is(err, sched.ErrInvalid) {
			t.Errorf("New(%+v) = %v, want ErrInvalid", cfg, err)
		}
	}
}

func TestBadQueuesAreErrors(t *testing.T) {
	t.Parallel()
	s, err := sched.New(sched.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop(context.Background())
	h := nop[int, int]
	bad := map[string]sched.QueueConfig[int, int]{
		"nil handler":        {},
		"priority 0 is fine": {Handler: h}, // control: valid
		"priority 101":       {Handler: h, Priority: 101},
		"priority -1":        {Handler: h, Priority: -1},
		"negative cap":       {Handler: h, MaxConcurrency: -1},
		"negative rate":      {Handler: h, Rate: -1},
		"NaN rate":           {Handler: h, Rate: math.NaN()},
		"infinite rate":      {Handler: h, Rate: math.Inf(1)},
		"burst without rate": {Handler: h, Burst: 3},
		"negative burst":     {Handler: h, Rate: 1, Burst: -1},
		"batch too large":    {Handler: h, BatchSize: 1 << 20},
		"negative batch":     {Handler: h, BatchSize: -1},
		"negative reruns":    {Handler: h, MaxReruns: -1},
		"bad retry":          {Handler: h, Retry: &sched.RetryPolicy{MaxRetries: -1}},
		"bad jitter":         {Handler: h, Retry: &sched.RetryPolicy{Jitter: 1}},
		"bad retention":      {Handler: h, Retention: &sched.Retention{MaxFailed: -1}},
	}
	for name, cfg := range bad {
		_, err := sched.NewQueue(s, "q "+name, cfg)
		if name == "priority 0 is fine" {
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if !errors.Is(err, sched.ErrInvalid) {
			t.Errorf("%s: NewQueue = %v, want ErrInvalid", name, err)
		}
	}
	for _, name := range []string{"", "\xff\xfe", strings.Repeat("q", 201)} {
		if _, err := sched.NewQueue(s, name, sched.QueueConfig[int, int]{Handler: h}); !errors.Is(err, sched.ErrInvalid) {
			t.Errorf("name %q: %v", name, err)
		}
	}
	if _, err := sched.NewQueue(s, "q priority 0 is fine", sched.QueueConfig[int, int]{Handler: h}); !errors.Is(err, sched.ErrDuplicateQueue) {
		t.Errorf("duplicate name: %v", err)
	}
	if _, err := sched.NewQueue(s, "strings keyed by int", sched.QueueConfig[string, int]{Handler: nop[string, int]}); !errors.Is(err, sched.ErrInvalid) {
		t.Errorf("a key type other than the payload's without a Key func: %v", err)
	}
	if _, err := sched.NewQueue[int, int](nil, "x", sched.QueueConfig[int, int]{Handler: h}); !errors.Is(err, sched.ErrInvalid) {
		t.Errorf("nil scheduler: %v", err)
	}
	if _, err := sched.QueueOf[int, int](s, "nope"); !errors.Is(err, sched.ErrUnknownQueue) {
		t.Errorf("QueueOf unknown: %v", err)
	}
	if _, err := sched.QueueOf[string, string](s, "q priority 0 is fine"); !errors.Is(err, sched.ErrInvalid) {
		t.Errorf("QueueOf with other types: %v", err)
	}
}

func TestBadAddsAreErrorsAndLoseNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := sched.New(sched.Config{})
	if err != nil {
		t.Fatal(err)
	}
	q := must.Queue(t, s, "floats", sched.QueueConfig[float64, float64]{Handler: nop[float64, float64]})
	anyq := must.Queue(t, s, "anys", sched.QueueConfig[any, any]{Handler: nop[any, any]})
	must.Add(t, q, 1.5)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for name, err := range map[string]error{
		"NaN key":        second(q.Add(ctx, math.NaN())),
		"unhashable key": second(anyq.Add(ctx, []int{1})),
		"NaN in any":     second(anyq.Add(ctx, any(math.NaN()))),
		"priority 0":     second(q.Add(ctx, 2, sched.WithPriority(0))),
		"priority 1000":  second(q.Add(ctx, 2, sched.WithPriority(1000))),
		"bad retry":      second(q.Add(ctx, 2, sched.WithRetry(sched.RetryPolicy{Base: -1}))),
		"zero option":    second(q.Add(ctx, 2, sched.AddOption{})),
	} {
		if !errors.Is(err, sched.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	//lint:ignore SA1012 the nil context is the bad input under test
	if _, _, err := q.Add(nil, 2); !errors.Is(err, sched.ErrInvalid) {
		t.Errorf("nil ctx: %v", err)
	}
	if _, _, err := q.Add(cancelled, 3); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled ctx: %v", err)
	}
	if rs, err := q.AddAll(ctx, []float64{4, math.NaN(), 5}); !errors.Is(err, sched.ErrInvalid) || len(rs) != 1 {
		t.Errorf("AddAll with a NaN in the middle = %v, %v; want the first added and ErrInvalid", rs, err)
	}
	if c := must.Counts(t, q); c.Pending != 2 {
		t.Errorf("pending %d after the bad adds, want 2 (1.5 and 4)", c.Pending)
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := q.Add(ctx, 6); !errors.Is(err, sched.ErrStopped) {
		t.Errorf("Add after Stop: %v", err)
	}
	if err := s.Start(ctx); !errors.Is(err, sched.ErrStopped) {
		t.Errorf("Start after Stop: %v", err)
	}
	if _, err := sched.NewQueue(s, "late", sched.QueueConfig[int, int]{Handler: nop[int, int]}); !errors.Is(err, sched.ErrStopped) {
		t.Errorf("NewQueue after Stop: %v", err)
	}
	if c := must.Counts(t, q); c.Pending != 2 {
		t.Errorf("pending %d after Stop, want 2: accepted entries stay", c.Pending)
	}
	//lint:ignore SA1012 the nil context is the bad input under test
	if err := s.Stop(nil); !errors.Is(err, sched.ErrInvalid) {
		t.Errorf("Stop(nil) = %v", err)
	}
	if err := s.Stop(ctx); err != nil {
		t.Errorf("second Stop = %v", err)
	}
	if err := q.SetMaxConcurrency(-1); !errors.Is(err, sched.ErrInvalid) {
		t.Errorf("SetMaxConcurrency(-1) = %v", err)
	}
	if err := q.SetRate(-1, 0); !errors.Is(err, sched.ErrInvalid) {
		t.Errorf("SetRate(-1) = %v", err)
	}
}

func second[A, B any](_ A, _ B, err error) error { return err }

// A Key or Group function that panics on a payload makes Add and AddAll
// return an error wrapping ErrInvalid, not panic; AddAll keeps what it added
// before, and the queue goes on working.
func TestPanickingKeyOrGroupIsAnError(t *testing.T) {
	t.Parallel()
	s := newScheduler(t, sched.Config{Workers: 2})
	ran := make(chan int, 8)
	q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
		Handler: func(_ context.Context, j *sched.Job[int, int]) error { ran <- j.Payload; return nil },
		Key: func(v int) int {
			if v == 3 {
				panic("key of 3")
			}
			return v
		},
		Group: func(v int) string {
			if v == 4 {
				panic("group of 4")
			}
			return ""
		},
	})
	ctx := context.Background()
	for _, v := range []int{3, 4} {
		if _, _, err := q.Add(ctx, v); !errors.Is(err, sched.ErrInvalid) {
			t.Errorf("Add(%d) = %v, want ErrInvalid", v, err)
		}
	}
	res, err := q.AddAll(ctx, []int{1, 2, 3, 5})
	if !errors.Is(err, sched.ErrInvalid) || len(res) != 2 {
		t.Errorf("AddAll = %v, %v; want the first two added and ErrInvalid", res, err)
	}
	must.Add(t, q, 6)
	got := map[int]bool{}
	for range 3 {
		got[<-ran] = true
	}
	if !got[1] || !got[2] || !got[6] {
		t.Errorf("ran %v, want 1, 2 and 6", got)
	}
	if c := must.Counts(t, q); c.Added != 3 {
		t.Errorf("counts %+v, want 3 added", c)
	}
}
