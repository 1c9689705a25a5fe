package bench

import (
	"context"
	"errors"

	jkworkqueue "github.com/jobkit/jobkit/distinct/workqueue"
)

// ErrStopped is returned by [Consumer.Process] and [Consumer.Run] once the
// implementation was stopped and has nothing left to hand out.
var ErrStopped = errors.New("bench: stopped")

// ProcessFunc handles one batch of keys of type K. Returning an error asks
// the implementation to requeue the batch its own way. The items slice may be
// reused after it returns.
type ProcessFunc[K comparable] = func(ctx context.Context, items []K) error

// Impl is the adapter each benchmark drives, for keys of type K. All methods
// are safe for concurrent use.
type Impl[K comparable] interface {
	// Add offers x to the queue. Implementations without deduplication
	// (the channel) accept every add.
	Add(x K)
	// Consumer returns a consumer for one goroutine: it owns the buffer its
	// batches are built in, so that consuming allocates nothing in the
	// adapter.
	Consumer() Consumer[K]
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

// Path is how a consumer loop takes and settles its batches: the path=
// dimension of BenchmarkMPMC.
type Path string

const (
	// PathWork is the implementation's consumer loop: jobkit's Queue.Work,
	// which settles a batch and takes the next under one lock; for the
	// peers, which have no such call, their one batch call in a loop (Get
	// and Done, or a receive), as their users write it.
	PathWork Path = "work"
	// PathScope is jobkit's explicit-scope path, the second example of the
	// README: scope.Run around a take (Queue.TakeAppend into the consumer's
	// buffer, Take without its slice), in a loop, the batch settled when the
	// scope closes. Implementations without scopes (every peer) run
	// their PathWork loop for it: see [Factory.Scope].
	PathScope Path = "scope"
)

// Paths are the consumer paths, PathWork first.
var Paths = []Path{PathWork, PathScope}

// Consumer takes batches for one goroutine.
type Consumer[K comparable] interface {
	// Process waits for at least one item, calls f with 1..max of them, and
	// settles them: f's nil removes them, an error requeues them. Peers that
	// have no batch take hand out one item per call unless the Impl was made
	// with Options.SoleConsumer. It returns ErrStopped once the Impl is
	// stopped and drained (the priority queue stops at once).
	Process(max int, f ProcessFunc[K]) error
	// Run is a consumer loop along path: it processes batches as Process
	// does until the next batch would end in an error, and returns that
	// error (f's, or ErrStopped). Implementations without a path of their
	// own (Factory.Scope false) run their PathWork loop whatever the path.
	Run(path Path, max int, f ProcessFunc[K]) error
}

// runLoop is Run for consumers without a loop of their own.
func runLoop[K comparable](process func(int, ProcessFunc[K]) error, max int, f ProcessFunc[K]) error {
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

// Factory makes one implementation for keys of type K.
type Factory[K comparable] struct {
	// Name is the impl= value in benchmark names.
	Name string
	// Scope reports that the implementation has a PathScope of its own.
	// Benchmarks run PathScope only for those; for the others it is the
	// same loop as PathWork, measured once, under path=work, and the report
	// takes that figure as their path=scope baseline.
	Scope bool
	// New returns a fresh, empty queue.
	New func(Options) Impl[K]
}

// Factories returns the implementations every scenario compares, for keys
// of type K, jobkit first.
//
// This table is the one place to add an implementation. A queue with
// client-go's Get/Done method set (see getDoneQueue) needs one entry and no
// adapter, as jobkit's client-go-compatible façade, distinct/workqueue, has
// ("workqueue"): requeueAddBeforeDone if it keeps client-go's dirty
// semantics, an add of an item in progress queueing it again after Done;
// requeueAddAfterDone if it rejects such an add. BenchmarkMPMC (under
// path=work: it has no scope path), BenchmarkQueue_AddProcess,
// BenchmarkRequeue, BenchmarkScale and TestImplsProcessEveryItemOnce then
// include it, and the report gives it a column of its own in every
// scenario-1 table.
func Factories[K comparable]() []Factory[K] {
	return []Factory[K]{
		{Name: "jobkit", Scope: true, New: func(o Options) Impl[K] { return newJobkit[K](o) }},
		{Name: "clientgo", New: func(o Options) Impl[K] { return newClientGo[K](o) }},
		{Name: "priorityqueue", New: func(o Options) Impl[K] { return newPriorityQueue[K](o) }},
		{Name: "chan", New: func(o Options) Impl[K] { return newChan[K](o) }},
		{Name: "workqueue", New: func(o Options) Impl[K] {
			return newGetDone[K](jkworkqueue.NewTyped[K](), o, requeueAddBeforeDone)
		}},
	}
}

// Lookup returns the factory named name for keys of type K, or false. Besides
// the entries of Factories it knows "jobkit-rerun": jobkit with
// Options.Rerun.
func Lookup[K comparable](name string) (Factory[K], bool) {
	for _, f := range Factories[K]() {
		if f.Name == name {
			return f, true
		}
	}
	if name == "jobkit-rerun" {
		return Factory[K]{Name: name, Scope: true, New: func(o Options) Impl[K] {
			o.Rerun = true
			return newJobkit[K](o)
		}}, true
	}
	return Factory[K]{}, false
}
