package bench

import (
	"context"
	"errors"
)

// ErrStopped is returned by [Impl.Process] once the implementation was
// stopped and has nothing left to hand out.
var ErrStopped = errors.New("bench: stopped")

// ProcessFunc handles one batch. Returning an error asks the implementation
// to requeue the batch its own way. The items slice may be reused after it
// returns.
type ProcessFunc = func(ctx context.Context, items []int) error

// Impl is the adapter each benchmark drives. All methods are safe for
// concurrent use.
type Impl interface {
	// Add offers x to the queue. Implementations without deduplication
	// (the channel) accept every add.
	Add(x int)
	// Consumer returns a consumer for one goroutine: it owns the buffer its
	// batches are built in, so that consuming allocates nothing in the
	// adapter.
	Consumer() Consumer
	// Hold takes n items one at a time and keeps them in progress until the
	// returned function settles them all as done. It must only be called
	// with at least n items queued and no other consumer.
	Hold(n int) (release func())
	// Len returns the number of queued items, not counting those in
	// progress.
	Len() int
	// Stop shuts the queue down: blocked consumers return ErrStopped.
	Stop()
}

// Consumer takes batches for one goroutine.
type Consumer interface {
	// Process waits for at least one item, calls f with 1..max of them, and
	// settles them: f's nil removes them, an error requeues them. Peers that
	// have no batch take hand out one item per call unless the Impl was made
	// with Options.SoleConsumer. It returns ErrStopped once the Impl is
	// stopped and drained (the priority queue stops at once).
	Process(max int, f ProcessFunc) error
	// Run is the consumer loop: it processes batches as Process does until
	// Process would return an error, and returns that error. jobkit's is
	// Queue.Work, which settles a batch and takes the next under one lock;
	// the peers, having no such call, run Process in a loop, as their users
	// do.
	Run(max int, f ProcessFunc) error
}

// runLoop is Run for consumers without a loop of their own.
func runLoop(process func(int, ProcessFunc) error, max int, f ProcessFunc) error {
	for {
		if err := process(max, f); err != nil {
			return err
		}
	}
}

// Options configures an Impl.
type Options struct {
	// Capacity is the channel's buffer size; the queues are unbounded.
	// Defaults to 1024.
	Capacity int
	// SoleConsumer promises that one goroutine consumes, and nobody adds
	// while it does. The peers without a batch take then build a batch of up
	// to max items from Len and Get, which is safe only under that promise
	// (with several consumers, a Len check followed by Get can block while
	// holding a batch).
	SoleConsumer bool
	// Rerun selects client-go's "dirty" semantics for jobkit: an add of an
	// in-progress item runs it once more after it settles.
	Rerun bool
}

// Factory makes one implementation.
type Factory struct {
	// Name is the impl= value in benchmark names.
	Name string
	// New returns a fresh, empty queue.
	New func(Options) Impl
}

// Factories are the implementations every scenario compares, jobkit first.
var Factories = []Factory{
	{Name: "jobkit", New: func(o Options) Impl { return newJobkit(o) }},
	{Name: "clientgo", New: func(o Options) Impl { return newClientGo(o) }},
	{Name: "priorityqueue", New: func(o Options) Impl { return newPriorityQueue(o) }},
	{Name: "chan", New: func(o Options) Impl { return newChan(o) }},
}

// Lookup returns the factory named name, or false.
func Lookup(name string) (Factory, bool) {
	for _, f := range Factories {
		if f.Name == name {
			return f, true
		}
	}
	if name == "jobkit-rerun" {
		return Factory{Name: name, New: func(o Options) Impl {
			o.Rerun = true
			return newJobkit(o)
		}}, true
	}
	return Factory{}, false
}
