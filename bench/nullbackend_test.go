package bench

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/scope"
)

// nullBackend is a backend that does as little as one can for the
// scheduler's hot path, to measure the scheduler around its backend
// (BenchmarkSched_Floor/part=scheduler): Add appends to a FIFO under one
// lock, with no duplicate check, no states, no counts and no retention;
// Take pops up to Max entries and registers one finalizer, which puts
// nothing back; Start and Settle do nothing. It keeps no promise of the
// Backend contract beyond running every job added once, in order, while
// nothing fails: it is a measuring device, not a backend. The methods off
// the hot path are an empty Memory's.
type nullBackend struct {
	*sched.Memory[int, int]
	mu     sync.Mutex
	notify func()
	seq    sched.ID
	fifo   []sched.Claim[int, int]
	head   int // fifo[head:] are queued
}

func newNullBackend() *nullBackend { return &nullBackend{Memory: sched.NewMemory[int, int]()} }

func (b *nullBackend) Open(q sched.QueueInfo) error {
	b.notify = q.Notify
	return b.Memory.Open(q)
}

func (b *nullBackend) Add(_ context.Context, a sched.NewEntry[int, int]) (sched.ID, bool, error) {
	b.mu.Lock()
	b.seq++
	id := b.seq
	b.fifo = append(b.fifo, sched.Claim[int, int]{ID: id, Key: a.Key, Payload: a.Payload, Priority: a.Priority, EnqueuedAt: a.Now})
	b.mu.Unlock()
	b.notify()
	return id, true, nil
}

// nullFinalizer is the finalizer of every Take of a nullBackend.
type nullFinalizer struct{}

func (nullFinalizer) Finalize(scope.Exit) error { return nil }

func (b *nullBackend) Take(_ context.Context, s *scope.Scope, r sched.TakeRequest, dst []sched.Claim[int, int]) ([]sched.Claim[int, int], error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := min(r.Max, len(b.fifo)-b.head)
	if n <= 0 {
		return dst, nil
	}
	if !s.TryAdd(nullFinalizer{}) {
		return dst, scope.ErrClosed
	}
	dst = append(dst, b.fifo[b.head:b.head+n]...)
	b.head += n
	if b.head > len(b.fifo)/2 { // move the queued ones down: amortized O(1) a job
		k := copy(b.fifo, b.fifo[b.head:])
		clear(b.fifo[k:])
		b.fifo, b.head = b.fifo[:k], 0
	}
	return dst, nil
}

func (b *nullBackend) Start(context.Context, *sched.Claim[int, int], time.Time, time.Time) error {
	return nil
}

func (b *nullBackend) Settle(context.Context, *sched.Claim[int, int], sched.Outcome) error {
	return nil
}

// The null backend's scheduler runs every job once, as the floor's
// part=scheduler drives it.
func TestNullRunnerRunsEveryJobOnce(t *testing.T) {
	t.Parallel()
	checkEveryJobOnce(t, nullRunner())
}
