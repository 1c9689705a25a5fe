package bench

import (
	"context"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
)

// getDoneQueue is the part of client-go's workqueue.TypedInterface[K] that
// the Get/Done adapter uses. client-go's queue, controller-runtime's priority
// queue and any client-go-compatible queue (a façade with Add, Len, Get,
// Done, ShutDown, ShutDownWithDrain, ShuttingDown) have it.
type getDoneQueue[K comparable] interface {
	Add(item K)
	Len() int
	Get() (item K, shutdown bool)
	Done(item K)
	ShutDown()
}

// requeue says how the Get/Done adapter puts a failed item back.
type requeue uint8

const (
	// requeueAddBeforeDone adds a failed item again before Done: a queue
	// with client-go's semantics marks it dirty and queues it at the tail
	// once Done is called.
	requeueAddBeforeDone requeue = iota
	// requeueAddAfterDone adds a failed item again after Done, at the tail.
	requeueAddAfterDone
)

// getDone adapts a queue with client-go's Get/Done interface, used as its
// users use it: Get, then Done, one item at a time. Two peers and jobkit's
// façade have it:
//
//   - client-go's workqueue.Typed. A failed item is added again before Done,
//     so it is marked dirty and goes back at the tail.
//   - controller-runtime's priorityqueue, with every item at the default
//     priority, so it is FIFO. Its adds are asynchronous (buffered, then moved
//     into the queue by a goroutine of its own) and Get receives from a
//     goroutine over an unbuffered channel. The empty name turns metrics off,
//     as client-go's NewTyped does by default. A failed item is added again
//     after Done, at the tail.
//   - jobkit's distinct/workqueue.Typed, client-go's semantics over the
//     distinct queue in Rerun mode: as client-go's.
//
// The adapter has one consumer path: Run is the Get/Done loop for PathWork
// and PathScope alike.
type getDone[K comparable] struct {
	q    getDoneQueue[K]
	sole bool
	how  requeue
}

// newGetDone adapts q, a fresh, empty queue.
func newGetDone[K comparable](q getDoneQueue[K], o Options, how requeue) *getDone[K] {
	return &getDone[K]{q: q, sole: o.SoleConsumer, how: how}
}

func newClientGo[K comparable](o Options) *getDone[K] {
	return newGetDone[K](workqueue.NewTyped[K](), o, requeueAddBeforeDone)
}

func newPriorityQueue[K comparable](o Options) *getDone[K] {
	return newGetDone[K](priorityqueue.New[K](""), o, requeueAddAfterDone)
}

func (g *getDone[K]) Add(x K) { g.q.Add(x) }

func (g *getDone[K]) Consumer() Consumer[K] { return &getDoneConsumer[K]{g: g} }

type getDoneConsumer[K comparable] struct {
	g   *getDone[K]
	buf []K
}

func (k *getDoneConsumer[K]) Process(max int, f ProcessFunc[K]) error {
	q := k.g.q
	x, shutdown := q.Get()
	if shutdown {
		return ErrStopped
	}
	items := append(k.buf[:0], x)
	if k.g.sole {
		for len(items) < max && q.Len() > 0 { // safe: sole consumer
			x, _ := q.Get()
			items = append(items, x)
		}
	}
	k.buf = items
	err := f(context.Background(), items)
	for _, x := range items {
		if err != nil && k.g.how == requeueAddBeforeDone {
			q.Add(x)
		}
		q.Done(x)
		if err != nil && k.g.how == requeueAddAfterDone {
			q.Add(x)
		}
	}
	return err
}

// Run is Process in a loop whatever the path: these queues have no scopes.
func (k *getDoneConsumer[K]) Run(_ Path, max int, f ProcessFunc[K]) error {
	return runLoop(k.Process, max, f)
}

func (g *getDone[K]) Hold(n int) func() {
	held := make([]K, 0, n)
	for range n {
		x, _ := g.q.Get()
		held = append(held, x)
	}
	return func() {
		for _, x := range held {
			g.q.Done(x)
		}
	}
}

// Len returns the number of ready items (the priority queue flushes its add
// buffer first).
func (g *getDone[K]) Len() int { return g.q.Len() }

func (g *getDone[K]) Stop() { g.q.ShutDown() }
