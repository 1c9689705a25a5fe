package workqueue_test

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/jobkit/jobkit/distinct/workqueue"
)

// impls are the two paths of Typed: the distinct queue, and client-go's
// algorithm over a storage Queue of the caller's.
var impls = []struct {
	name string
	new  func() *workqueue.Typed[int]
}{
	{"distinct", workqueue.NewTyped[int]},
	{"custom", func() *workqueue.Typed[int] {
		return workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[int]{Queue: &lifo{}})
	}},
}

// lifo is a storage Queue of the caller's that reorders: last in, first out.
type lifo struct {
	items   []int
	touched []int
}

func (l *lifo) Touch(x int) { l.touched = append(l.touched, x) }
func (l *lifo) Push(x int)  { l.items = append(l.items, x) }
func (l *lifo) Len() int    { return len(l.items) }
func (l *lifo) Pop() int {
	x := l.items[len(l.items)-1]
	l.items = l.items[:len(l.items)-1]
	return x
}

func get(t *testing.T, q *workqueue.Typed[int]) int {
	t.Helper()
	x, shutdown := q.Get()
	if shutdown {
		t.Fatal("Get reported shutdown")
	}
	return x
}

func TestAddGetDoneIsFIFOAndDistinct(t *testing.T) {
	t.Parallel()
	q := workqueue.NewTyped[int]()
	for _, x := range []int{3, 1, 2, 1, 3} {
		q.Add(x)
	}
	if q.Len() != 3 {
		t.Fatalf("Len() = %d, want 3", q.Len())
	}
	var got []int
	for range 3 {
		x := get(t, q)
		got = append(got, x)
		q.Done(x)
	}
	if !slices.Equal(got, []int{3, 1, 2}) {
		t.Errorf("got %v, want [3 1 2]", got)
	}
	if q.Len() != 0 || q.ShuttingDown() {
		t.Errorf("Len() = %d, ShuttingDown() = %v", q.Len(), q.ShuttingDown())
	}
	q.ShutDown()
}

// An item added while it is processed is queued again, once, at the tail,
// when Done is called; not before.
func TestAddWhileProcessingRunsOnceMoreAfterDone(t *testing.T) {
	t.Parallel()
	for _, impl := range impls {
		t.Run(impl.name, func(t *testing.T) {
			q := impl.new()
			q.Add(1)
			x := get(t, q)
			q.Add(1)
			q.Add(1)
			q.Add(2)
			if q.Len() != 1 {
				t.Fatalf("Len() = %d while 1 is processed and dirty, want 1 (just 2)", q.Len())
			}
			if y := get(t, q); y != 2 {
				t.Fatalf("Get() = %d, want 2: 1 must wait for Done", y)
			}
			q.Done(2)
			q.Done(x)
			if q.Len() != 1 {
				t.Fatalf("Len() = %d after Done of a dirty item, want 1", q.Len())
			}
			if y := get(t, q); y != 1 {
				t.Fatalf("Get() = %d, want 1 again", y)
			}
			q.Done(1)
			q.Done(1) // not processed: nothing happens
			q.Done(7) // never added: nothing happens
			if q.Len() != 0 {
				t.Fatalf("Len() = %d, want 0", q.Len())
			}
			q.ShutDown()
		})
	}
}

func TestShutDownHandsOutWhatIsQueuedThenReportsShutdown(t *testing.T) {
	t.Parallel()
	for _, impl := range impls {
		t.Run(impl.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := impl.new()
				blocked := make(chan bool)
				go func() {
					_, shutdown := q.Get() // waits on an empty queue
					blocked <- shutdown
				}()
				synctest.Wait()
				q.Add(1)
				if shutdown := <-blocked; shutdown {
					t.Fatal("a waiting Get reported shutdown on an add")
				}
				q.Add(2)
				q.ShutDown()
				q.Add(3) // ignored
				if !q.ShuttingDown() {
					t.Fatal("ShuttingDown() = false")
				}
				if x := get(t, q); x != 2 {
					t.Fatalf("Get() = %d, want the queued 2", x)
				}
				if _, shutdown := q.Get(); !shutdown {
					t.Fatal("Get on a shut-down, empty queue did not report shutdown")
				}
				q.Done(1)
				q.Done(2)
				if q.Len() != 0 {
					t.Fatalf("Len() = %d: the add after ShutDown was kept", q.Len())
				}
			})
		})
	}
}

// ShutDownWithDrain waits for the items handed out, not for those still
// queued, and a ShutDown stops the wait.
func TestShutDownWithDrain(t *testing.T) {
	t.Parallel()
	for _, impl := range impls {
		t.Run(impl.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := impl.new()
				q.Add(1)
				q.Add(2)
				x := get(t, q)
				q.Add(3)
				var returned atomic.Bool
				go func() {
					q.ShutDownWithDrain()
					returned.Store(true)
				}()
				synctest.Wait()
				if returned.Load() {
					t.Fatal("ShutDownWithDrain returned with an item processed")
				}
				q.Done(x)
				synctest.Wait()
				if !returned.Load() {
					t.Fatal("ShutDownWithDrain still waits after the last Done")
				}
				if q.Len() != 2 {
					t.Fatalf("Len() = %d: the queued items must stay for Get", q.Len())
				}

				// A ShutDown stops a drain that waits.
				q2 := impl.new()
				q2.Add(1)
				get(t, q2)
				done := make(chan struct{})
				go func() {
					q2.ShutDownWithDrain()
					close(done)
				}()
				synctest.Wait()
				q2.ShutDown()
				<-done
			})
		})
	}
}

// A storage Queue of the caller's orders the items and is touched when a
// queued item is added again, as in client-go.
func TestCustomQueueOrdersAndIsTouched(t *testing.T) {
	t.Parallel()
	l := &lifo{}
	q := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[int]{Name: "x", Queue: l})
	for x := range 3 {
		q.Add(x)
	}
	q.Add(1)
	var got []int
	for range 3 {
		x := get(t, q)
		got = append(got, x)
		q.Done(x)
	}
	if !slices.Equal(got, []int{2, 1, 0}) || !slices.Equal(l.touched, []int{1}) {
		t.Errorf("got %v, touched %v; want [2 1 0] and [1]", got, l.touched)
	}
	// DefaultQueue given explicitly is the same as none: FIFO.
	d := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[int]{Queue: workqueue.DefaultQueue[int]()})
	d.Add(1)
	d.Add(2)
	if x := get(t, d); x != 1 {
		t.Errorf("DefaultQueue: Get() = %d, want 1", x)
	}
}

// Keys that could never be found again are ignored, not kept for ever.
func TestInvalidKeysAreIgnored(t *testing.T) {
	t.Parallel()
	q := workqueue.NewTyped[float64]()
	q.Add(math.NaN())
	q.Add(1)
	if q.Len() != 1 {
		t.Fatalf("Len() = %d, want 1", q.Len())
	}
	a := workqueue.New()
	a.Add([]int{1}) // unhashable in an any: client-go's map would panic
	a.Add("ok")
	if a.Len() != 1 {
		t.Fatalf("Len() = %d, want 1", a.Len())
	}
	a.ShutDown()
	q.ShutDown()
}

// Many producers and workers: every add of an item is processed, an item is
// never processed by two workers at once, and one processed while it is added
// again is processed once more after.
func TestConcurrentWorkersNeverShareAnItem(t *testing.T) {
	t.Parallel()
	for _, impl := range impls {
		t.Run(impl.name, func(t *testing.T) {
			const keys, rounds, workers = 50, 40, 8
			q := impl.new()
			var (
				busy      [keys]atomic.Int32
				processed [keys]atomic.Int32
				wg        sync.WaitGroup
			)
			for w := 0; w < workers; w++ {
				wg.Go(func() {
					for {
						x, shutdown := q.Get()
						if shutdown {
							return
						}
						if busy[x].Add(1) != 1 {
							t.Errorf("item %d processed by two workers at once", x)
						}
						processed[x].Add(1)
						busy[x].Add(-1)
						q.Done(x)
					}
				})
			}
			var producers sync.WaitGroup
			for p := 0; p < 4; p++ {
				producers.Go(func() {
					for r := 0; r < rounds; r++ {
						for x := 0; x < keys; x++ {
							q.Add(x)
						}
					}
				})
			}
			producers.Wait()
			q.ShutDownWithDrain()
			// Drained: nothing in progress; what is queued is handed out
			// before the workers see shutdown.
			wg.Wait()
			for x := range keys {
				if processed[x].Load() == 0 {
					t.Errorf("item %d never processed", x)
				}
			}
			if q.Len() != 0 {
				t.Errorf("Len() = %d after the workers returned", q.Len())
			}
		})
	}
}
