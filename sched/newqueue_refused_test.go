package sched_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// countsOpen is a Memory that counts its Opens.
type countsOpen struct {
	*sched.Memory[int, int]
	opens int
}

func (b *countsOpen) Open(q sched.QueueInfo) error {
	b.opens++
	return b.Memory.Open(q)
}

// panicsOpen is a Memory whose Open panics.
type panicsOpen struct{ *sched.Memory[int, int] }

func (panicsOpen) Open(sched.QueueInfo) error { panic("backend bug") }

// A NewQueue refused for its name (taken) or for a stopped scheduler
// leaves the Backend it was given unopened, so that it can serve another
// queue, and the name free of any trace. It was opened first, once, and a
// second NewQueue with it failed as "opened twice". A Backend whose Open
// panics does not keep the name taken either.
func TestRefusedNewQueueLeavesItsBackendUnopened(t *testing.T) {
	t.Parallel()
	s := must.New(t, sched.Config{})
	h := nop[int, int]
	if _, err := sched.NewQueue(s, "q", sched.QueueConfig[int, int]{Handler: h}); err != nil {
		t.Fatal(err)
	}
	b := &countsOpen{Memory: sched.NewMemory[int, int]()}
	if _, err := sched.NewQueue(s, "q", sched.QueueConfig[int, int]{Handler: h, Backend: b}); !errors.Is(err, sched.ErrDuplicateQueue) {
		t.Fatalf("NewQueue of a taken name = %v, want ErrDuplicateQueue", err)
	}
	if b.opens != 0 {
		t.Errorf("the refused queue's Backend was opened %d times", b.opens)
	}
	if _, err := sched.NewQueue(s, "r", sched.QueueConfig[int, int]{Handler: h, Backend: b}); err != nil || b.opens != 1 {
		t.Errorf("the same Backend under a free name: %v, opened %d times", err, b.opens)
	}

	func() {
		defer func() { _ = recover() }()
		_, _ = sched.NewQueue(s, "p", sched.QueueConfig[int, int]{Handler: h, Backend: panicsOpen{sched.NewMemory[int, int]()}})
	}()
	if _, err := sched.NewQueue(s, "p", sched.QueueConfig[int, int]{Handler: h}); err != nil {
		t.Errorf("the name of a queue whose Backend's Open panicked stays taken: %v", err)
	}

	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	b2 := &countsOpen{Memory: sched.NewMemory[int, int]()}
	if _, err := sched.NewQueue(s, "s", sched.QueueConfig[int, int]{Handler: h, Backend: b2}); !errors.Is(err, sched.ErrStopped) {
		t.Fatalf("NewQueue after Stop = %v, want ErrStopped", err)
	}
	if b2.opens != 0 {
		t.Errorf("the Backend of a queue refused after Stop was opened %d times", b2.opens)
	}
}

// openGate is Memory whose Open waits for release once it has closed
// opening.
type openGate struct {
	*sched.Memory[int, int]
	opening, release chan struct{}
}

func (b *openGate) Open(q sched.QueueInfo) error {
	close(b.opening)
	<-b.release
	return b.Memory.Open(q)
}

// A Stop that overtakes a NewQueue while it opens the Backend leaves the
// NewQueue as if it had ended just before the Stop: it returns the queue,
// whose adds return ErrStopped. (It returned ErrStopped with the Backend
// opened, which the caller could then use with no scheduler: "opened
// twice".)
func TestNewQueueOvertakenByStopReturnsAStoppedQueue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := must.New(t, sched.Config{Logger: quiet})
	b := &openGate{Memory: sched.NewMemory[int, int](), opening: make(chan struct{}), release: make(chan struct{})}
	type made struct {
		q   *sched.Queue[int, int]
		err error
	}
	done := make(chan made, 1)
	go func() {
		q, err := sched.NewQueue(s, "q", sched.QueueConfig[int, int]{Handler: nop[int, int], Backend: b})
		done <- made{q, err}
	}()
	<-b.opening
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	close(b.release)
	m := <-done
	if m.err != nil {
		t.Fatalf("NewQueue overtaken by Stop: %v, want the queue", m.err)
	}
	if _, _, err := m.q.Add(ctx, 1); !errors.Is(err, sched.ErrStopped) {
		t.Errorf("Add to the queue = %v, want ErrStopped", err)
	}
	if _, err := sched.NewQueue(s, "q2", sched.QueueConfig[int, int]{Handler: nop[int, int]}); !errors.Is(err, sched.ErrStopped) {
		t.Errorf("NewQueue after Stop = %v, want ErrStopped", err)
	}
}
