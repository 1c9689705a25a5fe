package distinct_test

import (
	"context"
	"errors"
	"math"
	"runtime"
	"slices"
	"testing"
	"weak"

	"github.com/jobkit/jobkit/distinct"
	"github.com/jobkit/jobkit/scope"
)

// invalidKeysOf checks that every key in bad is refused by every entry point
// of a Queue[T] that also holds good, and that the queue stays consistent.
func invalidKeysOf[T comparable](t *testing.T, good T, bad ...T) {
	t.Helper()
	ctx := context.Background()
	q := newQueue[T](t, distinct.Config{Capacity: 10})
	if !q.Add(good) {
		t.Fatalf("Add(%v) of a valid key = false", good)
	}
	items, s := takeIn(t, q, 1) // good is in progress now
	for _, x := range bad {
		if q.Add(x) {
			t.Errorf("Add(%#v) = true", x)
		}
		if ok, err := q.TryAdd(x); ok || !errors.Is(err, distinct.ErrInvalid) {
			t.Errorf("TryAdd(%#v) = %v, %v; want ErrInvalid", x, ok, err)
		}
		if ok, err := q.AddWait(ctx, x); ok || !errors.Is(err, distinct.ErrInvalid) {
			t.Errorf("AddWait(%#v) = %v, %v; want ErrInvalid", x, ok, err)
		}
		if rest := q.AddAll([]T{x, x}); len(rest) != 2 {
			t.Errorf("AddAll of invalid keys returned %v, want both back", rest)
		}
		if q.Remove(x) || q.Complete(s, x) || q.Fail(s, x) {
			t.Errorf("Remove, Complete or Fail of %#v reported true", x)
		}
		if _, ok := q.Info(x); ok {
			t.Errorf("Info(%#v) found it", x)
		}
	}
	if st := q.Stats(); st.Invalid != uint64(5*len(bad)) || st.Queued != 0 || st.InProgress != 1 {
		t.Errorf("Stats = %+v; want %d invalid, nothing queued, one in progress", st, 5*len(bad))
	}
	// The queue works on: the lock was released and nothing was corrupted.
	if err := s.Close(scope.Succeeded()); err != nil {
		t.Fatal(err)
	}
	wantQueued(t, q)
	if got := q.InProgress(); len(got) != 0 {
		t.Errorf("InProgress() = %v after completing", got)
	}
	if !q.Add(items[0]) {
		t.Error("cannot add a valid key after invalid ones")
	}
	closeAndDrain(t, q)
}

func TestKeysNotEqualToThemselvesAreRefused(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	type point struct {
		X, Y float64
	}
	type tagged struct {
		Name string
		V    [2]float32
	}
	invalidKeysOf(t, 1.5, nan, -nan)
	invalidKeysOf(t, float32(1), float32(nan))
	invalidKeysOf(t, complex(1, 2), complex(nan, 0), complex(0, nan))
	invalidKeysOf(t, point{1, 2}, point{nan, 2}, point{1, nan})
	invalidKeysOf(t, tagged{"a", [2]float32{1, 2}}, tagged{"a", [2]float32{1, float32(nan)}})
	invalidKeysOf(t, [3]float64{}, [3]float64{0, nan, 0})
	invalidKeysOf[any](t, 1, nan, float32(nan), point{nan, 0}, any(complex(nan, 1)))
	// The reproduction of the issue: the only NaN item taken and completed.
	q := newQueue[float64](t, distinct.Config{})
	q.Add(nan)
	q.Add(0)
	err := scope.Run(context.Background(), func(ctx context.Context, s *scope.Scope) error {
		_, err := q.Take(ctx, s, 1)
		return err
	})
	if err != nil || q.Len() != 0 || len(q.InProgress()) != 0 {
		t.Errorf("after taking the only valid key: err %v, Len %d, InProgress %v", err, q.Len(), q.InProgress())
	}
	// +0 and -0 are equal, so they are one key.
	if !q.Add(0) || q.Add(math.Copysign(0, -1)) {
		t.Error("-0 is not a duplicate of +0")
	}
}

func TestUnhashableKeysAreRefused(t *testing.T) {
	t.Parallel()
	type holder struct {
		ID   int
		Meta any
	}
	invalidKeysOf[any](t, "ok", []int{1}, map[string]int{}, func() {}, [1]any{[]byte("x")}, holder{1, []int{2}})
	invalidKeysOf(t, holder{1, "fine"}, holder{2, []int{2}}, holder{3, holder{4, map[int]int{}}})
	invalidKeysOf(t, [2]any{1, 2}, [2]any{1, []int{}})
	invalidKeysOf[error](t, errors.New("ok"), error(unhashableErr{}))
}

// unhashableErr is an error whose dynamic type cannot be hashed.
type unhashableErr []string

func (unhashableErr) Error() string { return "unhashable" }

// Integers in an any are hashed with their types, not placed by value: the
// key sets of the issue must neither exhaust memory nor confuse an int with
// an int64 of the same value.
func TestIntegersInAnInterfaceAreHashed(t *testing.T) {
	t.Parallel()
	q := newQueue[any](t, distinct.Config{})
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for i := range 300 {
		q.Add(i << 20)
		q.Add(i << 40)
	}
	for i := range 255 {
		if !q.Add(int64(i)) || !q.Add(int32(i)) || !q.Add(uint8(i)) {
			t.Fatalf("an int64, int32 or uint8 %d is taken for an int", i)
		}
	}
	runtime.ReadMemStats(&m1)
	if grew := m1.TotalAlloc - m0.TotalAlloc; grew > 4<<20 {
		t.Errorf("adding 1,365 keys allocated %d bytes", grew)
	}
	if q.Len() != 600-1+3*255 { // 0<<20 and 0<<40 are both the int 0
		t.Errorf("Len() = %d", q.Len())
	}
}

// TestAnEmptiedQueueReleasesAFailedBurst is not parallel: it measures the
// heap, which other tests would disturb.
func TestAnEmptiedQueueReleasesAFailedBurst(t *testing.T) {
	const n = 100_000
	heapOf := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heapOf()
	q := newQueue[int](t, distinct.Config{})
	for i := range n {
		q.Add(i)
	}
	_ = scope.Run(context.Background(), func(ctx context.Context, s *scope.Scope) error {
		_, err := q.Take(ctx, s, n)
		if err != nil {
			t.Fatal(err)
		}
		return errors.New("the whole burst fails")
	})
	full := heapOf()
	ctx := context.Background()
	for q.Len() > 0 {
		if err := q.Process(ctx, 1000, func(context.Context, []int) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	empty := heapOf()
	// Kept, the put-back structure alone would be 32 bytes an item: 3.2 MB.
	if empty > before+1<<20 {
		t.Errorf("heap %d bytes before, %d with the burst queued, %d once it completed: the emptied queue keeps %d", before, full, empty, empty-before)
	}
	runtime.KeepAlive(q)
}

func TestRemovedItemsAreCollectableAtOnce(t *testing.T) {
	t.Parallel()
	type job struct {
		id int
		_  [1 << 10]byte
	}
	q := newQueue[*job](t, distinct.Config{Timestamps: true})
	head := &job{id: 0}
	q.Add(head)
	var refs []weak.Pointer[job]
	for i := 1; i <= 10; i++ {
		j := &job{id: i}
		refs = append(refs, weak.Make(j))
		q.Add(j)
	}
	keeper := &job{id: 99} // stays queued behind the removed ones
	q.Add(keeper)
	// Two of them fail, so that they are put back before the others.
	items, s := takeIn(t, q, 3) // head, 1, 2
	q.Complete(s, items[0])
	s.Close(scope.Failed(errors.New("x"))) // 1 and 2 back at the head
	for _, w := range refs {
		if j := w.Value(); j != nil && !q.Remove(j) {
			t.Fatalf("Remove(%d) = false", j.id)
		}
	}
	if q.Len() != 1 {
		t.Fatalf("Len() = %d after removing all but one", q.Len())
	}
	// Nothing was taken past the holes, and the queue was not compacted by
	// a taker: the slots were cleared at once.
	items, s = nil, nil
	runtime.GC()
	for i, w := range refs {
		if w.Value() != nil {
			t.Errorf("removed item %d still reachable", i+1)
		}
	}
	if items, err := q.Take(context.Background(), scope.New(), 5); err != nil || len(items) != 1 || items[0] != keeper {
		t.Errorf("Take after the removals = %v, %v; want the keeper alone", items, err)
	}
	// Removing from the middle keeps the order of the rest.
	q2 := newQueue[int](t, distinct.Config{})
	q2.AddAll([]int{1, 2, 3, 4, 5})
	items2, s2 := takeIn(t, q2, 2)
	s2.Close(scope.Failed(errors.New("x"))) // 1, 2 put back
	if !q2.Remove(2) || !q2.Remove(4) {
		t.Fatal("Remove failed")
	}
	wantQueued(t, q2, 1, 3, 5)
	info, ok := q2.Info(1)
	if !ok || info.Attempts != 1 {
		t.Errorf("Info(1) = %+v, %v; want one attempt", info, ok)
	}
	if info, ok := q2.Info(5); !ok || info.Attempts != 0 || info.State != distinct.Queued {
		t.Errorf("Info(5) = %+v, %v", info, ok)
	}
	_ = items2
}

// Take with a context that is already done takes what is queued, as
// semaphore.Weighted.Acquire does; it returns the context's error only when
// it would have to wait.
func TestTakeWithADoneContext(t *testing.T) {
	t.Parallel()
	q := newQueue[int](t, distinct.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := scope.New()
	if _, err := q.Take(ctx, s, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("Take on an empty queue with a done ctx = %v", err)
	}
	q.Add(7)
	items, err := q.Take(ctx, s, 1)
	if err != nil || !slices.Equal(items, []int{7}) {
		t.Errorf("Take with a done ctx and an item queued = %v, %v; want the item", items, err)
	}
	s.Close(scope.Succeeded())
}

// Goexit in a scope.Run that took a batch puts the batch back.
func TestGoexitInRunPutsTheBatchBack(t *testing.T) {
	t.Parallel()
	q := newQueue[string](t, distinct.Config{})
	q.AddAll([]string{"a", "b", "c"})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = scope.Run(context.Background(), func(ctx context.Context, s *scope.Scope) error {
			if _, err := q.Take(ctx, s, 2); err != nil {
				return err
			}
			runtime.Goexit()
			return nil
		})
	}()
	<-done
	wantQueued(t, q, "a", "b", "c")
	if info, _ := q.Info("a"); info.Attempts != 1 {
		t.Errorf("attempts after Goexit = %d, want 1", info.Attempts)
	}
	closeAndDrain(t, q)
}
