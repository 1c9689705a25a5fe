package bench

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
)

// priorityQueue adapts controller-runtime's priorityqueue with every item at
// the default priority, so it is FIFO. Its adds are asynchronous (buffered,
// then moved into the queue by a goroutine of its own) and Get receives from a
// goroutine over an unbuffered channel. The empty name turns metrics off, as
// client-go's NewTyped does by default. A failed item is added again after
// Done, at the tail.
type priorityQueue struct {
	q    priorityqueue.PriorityQueue[int]
	sole bool
}

func newPriorityQueue(o Options) *priorityQueue {
	return &priorityQueue{q: priorityqueue.New[int](""), sole: o.SoleConsumer}
}

func (p *priorityQueue) Add(x int) { p.q.Add(x) }

func (p *priorityQueue) Consumer() Consumer { return &priorityQueueConsumer{p: p} }

type priorityQueueConsumer struct {
	p   *priorityQueue
	buf []int
}

func (k *priorityQueueConsumer) Process(max int, f ProcessFunc) error {
	q := k.p.q
	x, shutdown := q.Get()
	if shutdown {
		return ErrStopped
	}
	items := append(k.buf[:0], x)
	if k.p.sole {
		for len(items) < max && q.Len() > 0 { // safe: sole consumer
			x, _ := q.Get()
			items = append(items, x)
		}
	}
	k.buf = items
	err := f(context.Background(), items)
	for _, x := range items {
		q.Done(x)
		if err != nil {
			q.Add(x)
		}
	}
	return err
}

func (p *priorityQueue) Hold(n int) func() {
	held := make([]int, 0, n)
	for range n {
		x, _ := p.q.Get()
		held = append(held, x)
	}
	return func() {
		for _, x := range held {
			p.q.Done(x)
		}
	}
}

// Len flushes the add buffer and returns the number of ready items.
func (p *priorityQueue) Len() int { return p.q.Len() }

func (p *priorityQueue) Stop() { p.q.ShutDown() }
