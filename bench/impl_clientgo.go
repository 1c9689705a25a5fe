package bench

import (
	"context"

	"k8s.io/client-go/util/workqueue"
)

// clientGo adapts client-go's workqueue.Typed, used as its users do: Get, then
// Done, one item at a time. A failed item is added again before Done, so it
// is marked dirty and goes back at the tail.
type clientGo struct {
	q    *workqueue.Typed[int]
	sole bool
}

func newClientGo(o Options) *clientGo {
	return &clientGo{q: workqueue.NewTyped[int](), sole: o.SoleConsumer}
}

func (c *clientGo) Add(x int) { c.q.Add(x) }

func (c *clientGo) Consumer() Consumer { return &clientGoConsumer{c: c} }

type clientGoConsumer struct {
	c   *clientGo
	buf []int
}

func (k *clientGoConsumer) Process(max int, f ProcessFunc) error {
	q := k.c.q
	x, shutdown := q.Get()
	if shutdown {
		return ErrStopped
	}
	items := append(k.buf[:0], x)
	if k.c.sole {
		for len(items) < max && q.Len() > 0 { // safe: sole consumer
			x, _ := q.Get()
			items = append(items, x)
		}
	}
	k.buf = items
	err := f(context.Background(), items)
	for _, x := range items {
		if err != nil {
			q.Add(x)
		}
		q.Done(x)
	}
	return err
}

func (c *clientGo) Hold(n int) func() {
	held := make([]int, 0, n)
	for range n {
		x, _ := c.q.Get()
		held = append(held, x)
	}
	return func() {
		for _, x := range held {
			c.q.Done(x)
		}
	}
}

func (c *clientGo) Len() int { return c.q.Len() }

func (c *clientGo) Stop() { c.q.ShutDown() }
