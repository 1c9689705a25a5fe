package bench

import (
	"context"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
)

// getDone adapts a queue with client-go's Get/Done interface, used as its
// users use it: Get, then Done, one item at a time. Two peers have it:
//
//   - client-go's workqueue.Typed. A failed item is added again before Done,
//     so it is marked dirty and goes back at the tail.
//   - controller-runtime's priorityqueue, with every item at the default
//     priority, so it is FIFO. Its adds are asynchronous (buffered, then moved
//     into the queue by a goroutine of its own) and Get receives from a
//     goroutine over an unbuffered channel. The empty name turns metrics off,
//     as client-go's NewTyped does by default. A failed item is added again
//     after Done, at the tail.
type getDone struct {
	q             workqueue.TypedInterface[int]
	sole          bool
	addBeforeDone bool // how a failed item is requeued
}

func newClientGo(o Options) *getDone {
	return &getDone{q: workqueue.NewTyped[int](), sole: o.SoleConsumer, addBeforeDone: true}
}

func newPriorityQueue(o Options) *getDone {
	return &getDone{q: priorityqueue.New[int](""), sole: o.SoleConsumer}
}

func (g *getDone) Add(x int) { g.q.Add(x) }

func (g *getDone) Consumer() Consumer { return &getDoneConsumer{g: g} }

type getDoneConsumer struct {
	g   *getDone
	buf []int
}

func (k *getDoneConsumer) Process(max int, f ProcessFunc) error {
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
		if err != nil && k.g.addBeforeDone {
			q.Add(x)
		}
		q.Done(x)
		if err != nil && !k.g.addBeforeDone {
			q.Add(x)
		}
	}
	return err
}

func (k *getDoneConsumer) Run(max int, f ProcessFunc) error { return runLoop(k.Process, max, f) }

func (g *getDone) Hold(n int) func() {
	held := make([]int, 0, n)
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
func (g *getDone) Len() int { return g.q.Len() }

func (g *getDone) Stop() { g.q.ShutDown() }
