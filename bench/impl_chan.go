package bench

import (
	"context"
	"sync"
)

// channel is a buffered chan int: the floor, with no deduplication, no
// in-progress state and no requeue in position (a failed batch is sent again,
// at the tail). A batch is one blocking receive followed by non-blocking ones.
type channel struct {
	ch   chan int
	once sync.Once
}

func newChan(o Options) *channel {
	n := o.Capacity
	if n <= 0 {
		n = 1024
	}
	return &channel{ch: make(chan int, n)}
}

// Add sends x, blocking while the buffer is full. It must not be called
// after Stop.
func (c *channel) Add(x int) { c.ch <- x }

func (c *channel) Consumer() Consumer { return &chanConsumer{c: c} }

type chanConsumer struct {
	c   *channel
	buf []int
}

func (k *chanConsumer) Process(max int, f ProcessFunc) error {
	x, ok := <-k.c.ch
	if !ok {
		return ErrStopped
	}
	items := append(k.buf[:0], x)
recv:
	for len(items) < max {
		select {
		case x, ok := <-k.c.ch:
			if !ok {
				break recv
			}
			items = append(items, x)
		default:
			break recv
		}
	}
	k.buf = items
	err := f(context.Background(), items)
	if err != nil {
		for _, x := range items {
			k.c.ch <- x
		}
	}
	return err
}

func (k *chanConsumer) Run(max int, f ProcessFunc) error { return runLoop(k.Process, max, f) }

func (c *channel) Hold(n int) func() {
	for range n {
		<-c.ch
	}
	return func() {}
}

func (c *channel) Len() int { return len(c.ch) }

// Stop closes the channel; consumers drain it, then get ErrStopped.
func (c *channel) Stop() { c.once.Do(func() { close(c.ch) }) }
