// Package workqueue is a client-go-compatible façade over jobkit's distinct
// queue: its Typed[T] has the method set of client-go's
// workqueue.TypedInterface[T] (Add, Len, Get, Done, ShutDown,
// ShutDownWithDrain, ShuttingDown) and its constructors have client-go's
// names, so that a controller migrates by changing one import:
//
//	import "github.com/jobkit/jobkit/distinct/workqueue" // was k8s.io/client-go/util/workqueue
//
// It does not import k8s.io: Go interfaces are structural, so a *Typed[T]
// is a client-go TypedInterface[T] wherever one is expected.
//
// The semantics are client-go's: an item is queued at most once; Get hands
// out the oldest queued item and marks it in progress until Done; an Add of
// an item in progress marks it dirty, and Done queues it again, at the tail;
// after ShutDown adds are ignored and Get hands out what is queued, then
// reports shutdown; ShutDownWithDrain also waits until every item handed out
// is Done (what is still queued stays for Get), and a later ShutDown stops
// that wait.
//
// Underneath is a distinct queue in Rerun mode (see
// [github.com/jobkit/jobkit/distinct.Config]), served through the queue's
// own internals rather than a scope per Get: Add, Get and Done are one lock
// hold each, and allocate nothing in steady state. Keys that could never be
// found again (NaN, or a value that cannot be hashed in an any) are ignored
// by Add, where client-go's maps would keep or panic on them.
//
// What it leaves out: metrics (TypedQueueConfig has no MetricsProvider) and
// the injectable clock; the delaying and rate-limiting queues built on top of
// the interface in client-go are not part of this package.
package workqueue

import (
	"sync"

	"github.com/jobkit/jobkit/distinct/internal/core"
	"github.com/jobkit/jobkit/internal/keys"
)

// TypedInterface is client-go's workqueue.TypedInterface[T], the method set
// of a work queue.
type TypedInterface[T comparable] interface {
	Add(item T)
	Len() int
	Get() (item T, shutdown bool)
	Done(item T)
	ShutDown()
	ShutDownWithDrain()
	ShuttingDown() bool
}

// Interface is TypedInterface[any], as in client-go (which deprecates it in
// favour of TypedInterface).
type Interface TypedInterface[any]

// Queue is client-go's underlying storage for the order of items, for
// TypedQueueConfig.Queue. Its methods are called with the work queue's lock
// held, one at a time.
type Queue[T comparable] interface {
	// Touch is called when an item that is queued is added again.
	Touch(item T)
	// Push adds a new item.
	Push(item T)
	// Len returns the number of items.
	Len() int
	// Pop removes and returns the next item.
	Pop() (item T)
}

// DefaultQueue returns the FIFO storage a work queue uses when
// TypedQueueConfig.Queue is nil. Given explicitly, it is recognised and the
// queue is the same as without it.
func DefaultQueue[T comparable]() Queue[T] { return new(fifo[T]) }

// fifo is a slice-based FIFO Queue, as client-go's default.
type fifo[T comparable] []T

func (q *fifo[T]) Touch(T)     {}
func (q *fifo[T]) Push(item T) { *q = append(*q, item) }
func (q *fifo[T]) Len() int    { return len(*q) }

func (q *fifo[T]) Pop() T {
	item := (*q)[0]
	var zero T
	(*q)[0] = zero // let the item be collected
	*q = (*q)[1:]
	return item
}

// TypedQueueConfig configures a work queue, as client-go's does, less the
// metrics provider and the clock.
type TypedQueueConfig[T comparable] struct {
	// Name names the queue. It is kept for compatibility; this package
	// records no metrics.
	Name string

	// Queue is the storage for the order of items, nil for FIFO. A Queue of
	// your own (one that reorders items on Touch, say) is served by a plain
	// implementation of client-go's algorithm over it, with maps for the
	// dirty and in-progress sets; the fast path over the distinct queue is
	// FIFO only.
	Queue Queue[T]
}

// QueueConfig is TypedQueueConfig[any], as in client-go (which deprecates
// it in favour of TypedQueueConfig).
type QueueConfig = TypedQueueConfig[any]

// Typed is a work queue of items of type T with client-go's semantics (see
// the package documentation). Make one with NewTyped or NewTypedWithConfig;
// the zero value is not ready for use, as client-go's is not. All methods are
// safe for concurrent use.
//
// Costs: Add, Get and Done are O(1) amortized and one lock hold each; in
// steady state they allocate nothing.
type Typed[T comparable] struct {
	q      core.Queue[T]
	custom *custom[T] // for a TypedQueueConfig.Queue of the caller's, else nil
}

// Type is Typed[any], as in client-go (which deprecates it in favour of
// Typed).
type Type = Typed[any]

// New returns a work queue of any items.
//
// Deprecated: use NewTyped, as with client-go.
func New() *Type { return NewTyped[any]() }

// NewNamed returns a work queue of any items; the name is kept for
// compatibility.
//
// Deprecated: use NewTypedWithConfig, as with client-go.
func NewNamed(name string) *Type { return NewWithConfig(QueueConfig{Name: name}) }

// NewWithConfig returns a work queue of any items configured by config.
//
// Deprecated: use NewTypedWithConfig, as with client-go.
func NewWithConfig(config QueueConfig) *Type { return NewTypedWithConfig(config) }

// NewTyped returns an empty work queue of items of type T.
func NewTyped[T comparable]() *Typed[T] { return NewTypedWithConfig(TypedQueueConfig[T]{}) }

// NewTypedWithConfig returns an empty work queue configured by config.
func NewTypedWithConfig[T comparable](config TypedQueueConfig[T]) *Typed[T] {
	t := new(Typed[T])
	if _, ok := config.Queue.(*fifo[T]); config.Queue != nil && !ok {
		t.custom = newCustom(config.Queue)
		return t
	}
	t.q.Init(core.Config{Rerun: true})
	return t
}

// Add marks item as needing processing: it is queued at the tail unless it
// is queued already, or, if it is being processed, queued again once Done is
// called for it. After ShutDown, Add does nothing.
func (t *Typed[T]) Add(item T) {
	if t.custom != nil {
		t.custom.add(item)
		return
	}
	t.q.Add(item)
}

// Len returns the number of queued items, not counting those being
// processed. It is for information only: do not gate Add or Get on it.
func (t *Typed[T]) Len() int {
	if t.custom != nil {
		return t.custom.len()
	}
	return t.q.Len()
}

// Get waits until an item is queued and returns it, marked as being
// processed until Done is called with it; or returns shutdown true once the
// queue is shut down and nothing is queued, and then the caller's goroutine
// should end.
func (t *Typed[T]) Get() (item T, shutdown bool) {
	if t.custom != nil {
		return t.custom.get()
	}
	item, ok := t.q.Get()
	return item, !ok
}

// Done marks item, returned by Get, as processed. If it was added while it
// was processed, it is queued again, at the tail. Done of an item that is not
// being processed does nothing.
func (t *Typed[T]) Done(item T) {
	if t.custom != nil {
		t.custom.done(item)
		return
	}
	t.q.Done(item)
}

// ShutDown makes the queue ignore new items; Get hands out what is queued,
// then reports shutdown. It also stops a ShutDownWithDrain that is waiting.
func (t *Typed[T]) ShutDown() {
	if t.custom != nil {
		t.custom.shutDown(false)
		return
	}
	t.q.ShutDown(false)
}

// ShutDownWithDrain is ShutDown that then waits until every item handed out
// by Get is Done. Items still queued stay for Get to hand out. A ShutDown
// called meanwhile stops the wait. Workers must call Done for every item
// they get, or ShutDownWithDrain waits for ever.
func (t *Typed[T]) ShutDownWithDrain() {
	if t.custom != nil {
		t.custom.shutDown(true)
		return
	}
	t.q.ShutDown(true)
}

// ShuttingDown reports whether ShutDown or ShutDownWithDrain was called.
func (t *Typed[T]) ShuttingDown() bool {
	if t.custom != nil {
		return t.custom.shuttingDown()
	}
	return t.q.Closed()
}

// custom is client-go's algorithm over a Queue of the caller's: dirty holds
// the items that need processing (queued, or added again while processed),
// processing those handed out by Get.
type custom[T comparable] struct {
	mu         sync.Mutex
	cond       sync.Cond
	queue      Queue[T]
	kind       keys.Kind // of T: which keys Add must refuse
	dirty      map[T]struct{}
	processing map[T]struct{}
	down       bool // shutting down
	drain      bool // a ShutDownWithDrain waits
}

func newCustom[T comparable](queue Queue[T]) *custom[T] {
	c := &custom[T]{queue: queue, kind: keys.Of[T](), dirty: map[T]struct{}{}, processing: map[T]struct{}{}}
	c.cond.L = &c.mu
	return c
}

func (c *custom[T]) add(item T) {
	if !keys.Valid(c.kind, item) { // NaN or unhashable: a map would keep or panic on it
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.down {
		return
	}
	if _, ok := c.dirty[item]; ok {
		if _, ok := c.processing[item]; !ok {
			c.queue.Touch(item)
		}
		return
	}
	c.dirty[item] = struct{}{}
	if _, ok := c.processing[item]; ok {
		return
	}
	c.queue.Push(item)
	c.cond.Signal()
}

func (c *custom[T]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.queue.Len()
}

func (c *custom[T]) get() (item T, shutdown bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.queue.Len() == 0 && !c.down {
		c.cond.Wait()
	}
	if c.queue.Len() == 0 {
		return item, true
	}
	item = c.queue.Pop()
	c.processing[item] = struct{}{}
	delete(c.dirty, item)
	return item, false
}

func (c *custom[T]) done(item T) {
	if !keys.Valid(c.kind, item) { // never handed out; a map lookup would panic on it
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.processing[item]; !ok {
		return
	}
	delete(c.processing, item)
	if _, ok := c.dirty[item]; ok {
		c.queue.Push(item)
		c.cond.Signal()
	}
	if len(c.processing) == 0 {
		c.cond.Broadcast() // every draining ShutDown waits for this
	}
}

func (c *custom[T]) shutDown(drain bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drain = drain
	c.down = true
	c.cond.Broadcast()
	for drain && len(c.processing) != 0 && c.drain {
		c.cond.Wait()
	}
}

func (c *custom[T]) shuttingDown() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.down
}
