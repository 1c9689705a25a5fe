package workqueue_test

import (
	"math"
	"testing"

	"github.com/jobkit/jobkit/distinct/workqueue"
	"github.com/jobkit/jobkit/internal/testkit"
)

// fifoAny is a caller's storage Queue of any items.
type fifoAny struct{ items []any }

func (f *fifoAny) Touch(any)    {}
func (f *fifoAny) Push(x any)   { f.items = append(f.items, x) }
func (f *fifoAny) Len() int     { return len(f.items) }
func (f *fifoAny) Pop() (x any) { x, f.items = f.items[0], f.items[1:]; return x }

type fifoF struct{ items []float64 }

func (f *fifoF) Touch(float64)    {}
func (f *fifoF) Push(x float64)   { f.items = append(f.items, x) }
func (f *fifoF) Len() int         { return len(f.items) }
func (f *fifoF) Pop() (x float64) { x, f.items = f.items[0], f.items[1:]; return x }

// Add ignores keys that cannot be hashed "where client-go's maps would ...
// panic on them", with a storage Queue of the caller's too. Before, that
// path put the key in a map and panicked.
func TestACustomQueueIgnoresUnhashableKeys(t *testing.T) {
	q := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[any]{Queue: &fifoAny{}})
	defer q.ShutDown()
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("Add([]int{1}) panicked: %v", r)
			}
		}()
		q.Add([]int{1})
	}()
	if n := q.Len(); n != 0 {
		t.Errorf("Len() = %d after an unhashable Add, want 0", n)
	}
}

// With a storage Queue of the caller's, a NaN is ignored. Before, it was
// queued, handed out by Get, and then could never be Done (NaN != NaN), so
// it stayed in "processing" for ever and ShutDownWithDrain never returned.
func TestACustomQueueIgnoresNaN(t *testing.T) {
	q := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[float64]{Queue: &fifoF{}})
	q.Add(math.NaN())
	q.Add(1)
	if n := q.Len(); n != 1 {
		t.Errorf("Len() = %d after Add(NaN), Add(1); want 1 (NaN ignored)", n)
	}
	for q.Len() > 0 {
		x, _ := q.Get()
		q.Done(x)
	}
	testkit.Within(t, "ShutDownWithDrain after every item got was Done", q.ShutDownWithDrain)
}

// Done of an item that is not being processed does nothing, as documented,
// and so on both paths for a key that cannot be hashed (no Get ever hands one
// out, since Add ignores it). The path over a storage Queue of the caller's
// looked the key up in its processing map, and the lookup panicked.
func TestDoneOfAnUnhashableKeyDoesNothing(t *testing.T) {
	for _, tc := range []struct {
		name string
		q    *workqueue.Typed[any]
	}{
		{"distinct", workqueue.NewTyped[any]()},
		{"custom", workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[any]{Queue: &fifoAny{}})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer tc.q.ShutDown()
			tc.q.Add([]int{1}) // ignored
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("Done([]int{1}) panicked: %v", r)
					}
				}()
				tc.q.Done([]int{1})
			}()
			tc.q.Add(1)
			if x, shutdown := tc.q.Get(); shutdown || x != 1 {
				t.Fatalf("Get() = %v, %v; want 1, false", x, shutdown)
			}
			tc.q.Done(1)
			testkit.Within(t, "ShutDownWithDrain", tc.q.ShutDownWithDrain)
		})
	}
}
