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
