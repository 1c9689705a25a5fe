package bench

import (
	"context"
	"sync"
)

// channel is a buffered chan K: the floor, with no deduplication, no
// in-progress state and no requeue in position (a failed batch is sent again,
// at the tail). A batch is one blocking receive followed by non-blocking ones.
type channel[K comparable] struct {
	ch   chan K
	once sync.Once
}

func newChan[K comparable](o Options) *channel[K] {
	n := o.Capacity
	if n <= 0 {
		n = 1024
	}
	return &channel[K]{ch: make(chan K, n)}
}

// Add sends x, blocking while the buffer is full. It must not be called
// after Stop.
func (c *channel[K]) Add(x K) { c.ch <- x }

func (c *channel[K]) Consumer() Consumer[K] { return &chanConsumer[K]{c: c} }

type chanConsumer[K comparable] struct {
	c   *channel[K]
	buf []K
}

func (k *chanConsumer[K]) Process(max int, f ProcessFunc[K]) error {
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

// Run receives in a loop whatever the path: a channel has no scopes.
func (k *chanConsumer[K]) Run(_ Path, max int, f ProcessFunc[K]) error {
	return runLoop(k.Process, max, f)
}

func (c *channel[K]) Hold(n int) func() {
	for range n {
		<-c.ch
	}
	return func() {}
}

func (c *channel[K]) Len() int { return len(c.ch) }

// Stop closes the channel; consumers drain it, then get ErrStopped.
func (c *channel[K]) Stop() { c.once.Do(func() { close(c.ch) }) }
