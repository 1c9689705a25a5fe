package distinct_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"testing"

	"github.com/jobkit/jobkit/distinct"
	"github.com/jobkit/jobkit/scope"
)

// newQueue returns a queue configured by cfg, failing the test on error.
func newQueue[T comparable](t *testing.T, cfg distinct.Config) *distinct.Queue[T] {
	t.Helper()
	q, err := distinct.New[T](cfg)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// closeAndDrain closes q, processes what is left until Process reports
// ErrClosed, and checks that Drain then returns at once.
func closeAndDrain[T comparable](t *testing.T, q *distinct.Queue[T]) {
	t.Helper()
	ctx := context.Background()
	q.Close()
	for {
		err := q.Process(ctx, 16, func(context.Context, []T) error { return nil })
		if errors.Is(err, distinct.ErrClosed) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := q.Drain(ctx); err != nil {
		t.Fatal(err)
	}
}

// takeIn takes up to max items under a new scope and returns them with it.
func takeIn[T comparable](t *testing.T, q *distinct.Queue[T], max int) ([]T, *scope.Scope) {
	t.Helper()
	s := scope.New()
	items, err := q.Take(context.Background(), s, max)
	if err != nil {
		t.Fatalf("Take: %v", err)
	}
	return items, s
}

func wantQueued[T comparable](t *testing.T, q *distinct.Queue[T], want ...T) {
	t.Helper()
	if got := q.Queued(); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Fatalf("Queued() = %v, want %v", got, want)
	}
	if q.Len() != len(want) {
		t.Fatalf("Len() = %d, want %d", q.Len(), len(want))
	}
}

func TestAddIsDistinctAndKeepsPosition(t *testing.T) {
	t.Parallel()
	var q distinct.Queue[string] // the zero value is usable
	for _, x := range []string{"a", "b", "c"} {
		if !q.Add(x) {
			t.Fatalf("Add(%q) = false on first add", x)
		}
	}
	if q.Add("a") {
		t.Error("Add of a queued item reported true")
	}
	wantQueued(t, &q, "a", "b", "c")

	rest := q.AddAll([]string{"d", "b", "e", "d"})
	if !slices.Equal(rest, []string{"b", "d"}) {
		t.Errorf("AddAll returned %v, want [b d]", rest)
	}
	if rest := q.AddAll([]string{"f"}); rest != nil {
		t.Errorf("AddAll of new items returned %v, want nil", rest)
	}
	wantQueued(t, &q, "a", "b", "c", "d", "e", "f")
}

func TestTakeReturnsUpToMaxInFIFOOrder(t *testing.T) {
	t.Parallel()
	q := newQueue[int](t, distinct.Config{})
	q.AddAll([]int{1, 2, 3, 4, 5})
	items, s1 := takeIn(t, q, 2)
	if !slices.Equal(items, []int{1, 2}) {
		t.Fatalf("first Take = %v", items)
	}
	items, s2 := takeIn(t, q, 10)
	if !slices.Equal(items, []int{3, 4, 5}) {
		t.Fatalf("second Take = %v", items)
	}
	wantQueued(t, q)
	if got := q.InProgress(); !slices.Equal(got, []int{1, 2, 3, 4, 5}) {
		t.Errorf("InProgress() = %v", got)
	}
	if q.Add(3) {
		t.Error("Add of an in-progress item reported true")
	}
	s1.Close(scope.Succeeded())
	s2.Close(scope.Succeeded())
	if got := q.InProgress(); len(got) != 0 {
		t.Errorf("InProgress() after success = %v", got)
	}
	if !q.Add(3) {
		t.Error("Add after completion reported false")
	}
}

func TestFailurePutsItemsBackInOriginalPosition(t *testing.T) {
	t.Parallel()
	q := newQueue[int](t, distinct.Config{})
	q.AddAll([]int{1, 2, 3, 4, 5, 6})
	_, s1 := takeIn(t, q, 2) // 1 2
	_, s2 := takeIn(t, q, 2) // 3 4
	q.Add(7)
	// Fail the later batch first: positions, not failure order, decide.
	s2.Close(scope.Failed(errors.New("x")))
	wantQueued(t, q, 3, 4, 5, 6, 7)
	s1.Close(scope.Interrupted(context.Canceled))
	wantQueued(t, q, 1, 2, 3, 4, 5, 6, 7)

	_, s3 := takeIn(t, q, 3) // 1 2 3
	if err := scope.Run(context.Background(), func(ctx context.Context, s *scope.Scope) error {
		items, err := q.Take(ctx, s, 1)
		if err != nil || !slices.Equal(items, []int{4}) {
			t.Fatalf("Take = %v, %v", items, err)
		}
		panic("consumer bug")
	}); err == nil {
		t.Fatal("Run swallowed the panic")
	}
	wantQueued(t, q, 4, 5, 6, 7)
	s3.Close(scope.Failed(nil))
	wantQueued(t, q, 1, 2, 3, 4, 5, 6, 7)
	info, _ := q.Info(1)
	if info.Attempts != 2 {
		t.Errorf("item 1 attempts = %d, want 2", info.Attempts)
	}
	st := q.Stats()
	if st.Requeued != 8 || st.Completed != 0 || st.Added != 7 {
		t.Errorf("Stats = %+v", st)
	}
}

func TestEarlySettlement(t *testing.T) {
	t.Parallel()
	q := newQueue[string](t, distinct.Config{})
	q.AddAll([]string{"a", "b", "c", "d"})
	_, s := takeIn(t, q, 3) // a b c
	other := scope.New()
	if q.Complete(other, "a") {
		t.Error("Complete from a scope that does not hold the item reported true")
	}
	if !q.Complete(s, "a") {
		t.Fatal("Complete(a) reported false")
	}
	if q.Complete(s, "a") || q.Fail(s, "a") {
		t.Error("settling twice reported true")
	}
	if !q.Fail(s, "c") {
		t.Fatal("Fail(c) reported false")
	}
	wantQueued(t, q, "c", "d")
	if q.Add("a") != true {
		t.Error("a completed early, but Add(a) was rejected")
	}
	// The rest (b) settles with the scope; a, re-added and queued, is untouched.
	s.Close(scope.Failed(errors.New("late")))
	wantQueued(t, q, "b", "c", "d", "a")
	if q.Complete(s, "b") {
		t.Error("Complete from a closed scope reported true")
	}
}

func TestTakeBlocksUntilAdd(t *testing.T) {
	t.Parallel()
	q := newQueue[int](t, distinct.Config{})
	got := make(chan []int)
	go func() {
		items, _ := takeIn(t, q, 5)
		got <- items
	}()
	q.Add(42)
	if items := <-got; !slices.Equal(items, []int{42}) {
		t.Fatalf("blocked Take returned %v", items)
	}
}

func TestTakeCancellationChangesNothing(t *testing.T) {
	t.Parallel()
	q := newQueue[int](t, distinct.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 3)
	for range 3 { // one waits on activity, two wait for their turn
		go func() {
			_, err := q.Take(ctx, scope.New(), 1)
			errs <- err
		}()
	}
	cancel()
	for range 3 {
		if err := <-errs; !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled Take returned %v", err)
		}
	}
	q.Add(1)
	wantQueued(t, q, 1)
	if st := q.Stats(); st.InProgress != 0 {
		t.Errorf("in progress after cancellation: %d", st.InProgress)
	}
}

func TestTakeRejectsBadInput(t *testing.T) {
	t.Parallel()
	q := newQueue[int](t, distinct.Config{})
	q.Add(1)
	ctx := context.Background()
	closed := scope.New()
	closed.Close(scope.Succeeded())
	tests := []struct {
		name string
		take func() error
		want error
	}{
		{"max 0", func() error { _, err := q.Take(ctx, scope.New(), 0); return err }, distinct.ErrInvalid},
		{"nil scope", func() error { _, err := q.Take(ctx, nil, 1); return err }, distinct.ErrInvalid},
		//lint:ignore SA1012 the nil context is the bad input under test
		{"nil ctx", func() error { _, err := q.Take(nil, scope.New(), 1); return err }, distinct.ErrInvalid},
		{"closed scope", func() error { _, err := q.Take(ctx, closed, 1); return err }, scope.ErrClosed},
		{"Process max -1", func() error { return q.Process(ctx, -1, func(context.Context, []int) error { return nil }) }, distinct.ErrInvalid},
		{"Process nil f", func() error { return q.Process(ctx, 1, nil) }, distinct.ErrInvalid},
		{"Work max 0", func() error { return q.Work(ctx, 0, func(context.Context, []int) error { return nil }) }, distinct.ErrInvalid},
		{"Work nil f", func() error { return q.Work(ctx, 1, nil) }, distinct.ErrInvalid},
		//lint:ignore SA1012 the nil context is the bad input under test
		{"Work nil ctx", func() error { return q.Work(nil, 1, func(context.Context, []int) error { return nil }) }, distinct.ErrInvalid},
		//lint:ignore SA1012 the nil context is the bad input under test
		{"AddWait nil ctx", func() error { _, err := q.AddWait(nil, 2); return err }, distinct.ErrInvalid},
		//lint:ignore SA1012 the nil context is the bad input under test
		{"Drain nil ctx", func() error { return q.Drain(nil) }, distinct.ErrInvalid},
	}
	for _, tt := range tests {
		if err := tt.take(); !errors.Is(err, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, err, tt.want)
		}
	}
	wantQueued(t, q, 1)
	if _, err := distinct.New[int](distinct.Config{Capacity: -1}); !errors.Is(err, distinct.ErrInvalid) {
		t.Errorf("New with negative capacity: %v", err)
	}
}

func TestProcess(t *testing.T) {
	t.Parallel()
	q := newQueue[int](t, distinct.Config{})
	q.AddAll([]int{1, 2, 3})
	ctx := context.Background()
	boom := errors.New("boom")
	if err := q.Process(ctx, 2, func(ctx context.Context, items []int) error {
		if !slices.Equal(items, []int{1, 2}) {
			t.Errorf("items %v", items)
		}
		return boom
	}); err != boom {
		t.Fatalf("Process returned %v, want f's error", err)
	}
	wantQueued(t, q, 1, 2, 3)

	err := q.Process(ctx, 1, func(context.Context, []int) error { panic("bad") })
	var p *scope.PanicError
	if !errors.As(err, &p) || p.Value != "bad" {
		t.Fatalf("Process returned %v, want the panic", err)
	}
	wantQueued(t, q, 1, 2, 3)

	var seen []int
	for q.Len() > 0 {
		if err := q.Process(ctx, 2, func(_ context.Context, items []int) error {
			seen = append(seen, items...)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(seen, []int{1, 2, 3}) {
		t.Errorf("processed %v", seen)
	}
	if st := q.Stats(); st.Completed != 3 || st.Requeued != 3 {
		t.Errorf("Stats = %+v", st)
	}
}

func TestWork(t *testing.T) {
	t.Parallel()
	q := newQueue[int](t, distinct.Config{})
	q.AddAll([]int{1, 2, 3, 4, 5})
	boom := errors.New("boom")
	var seen []int
	err := q.Work(context.Background(), 2, func(_ context.Context, items []int) error {
		seen = append(seen, items...)
		if slices.Contains(items, 3) {
			return boom
		}
		return nil
	})
	if err != boom {
		t.Fatalf("Work returned %v, want f's error", err)
	}
	if !slices.Equal(seen, []int{1, 2, 3, 4}) {
		t.Fatalf("Work processed %v before failing", seen)
	}
	wantQueued(t, q, 3, 4, 5) // the failed batch is back in place
	if st := q.Stats(); st.Completed != 2 || st.Requeued != 2 || st.InProgress != 0 {
		t.Fatalf("Stats = %+v", st)
	}

	err = q.Work(context.Background(), 1, func(context.Context, []int) error { panic("bad") })
	if p := (*scope.PanicError)(nil); !errors.As(err, &p) || p.Value != "bad" {
		t.Fatalf("Work returned %v, want the panic", err)
	}
	wantQueued(t, q, 3, 4, 5)
}

// TestWorkSettlesWhenCancelled checks that the last batch Work processed is
// completed, not left in progress, when Work returns because its context is
// done, and that Work returns ErrClosed once the queue is closed and drained.
func TestWorkSettlesWhenCancelled(t *testing.T) {
	t.Parallel()
	q := newQueue[int](t, distinct.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	processed := make(chan int)
	errs := make(chan error)
	go func() {
		errs <- q.Work(ctx, 4, func(_ context.Context, items []int) error {
			processed <- items[0]
			return nil
		})
	}()
	q.Add(1)
	<-processed
	q.Add(2)
	<-processed
	cancel()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Work returned %v", err)
	}
	if st := q.Stats(); st.Completed != 2 || st.InProgress != 0 {
		t.Fatalf("after cancelled Work: %+v", st)
	}

	q.Add(3)
	q.Close()
	err := q.Work(context.Background(), 4, func(_ context.Context, items []int) error { return nil })
	if !errors.Is(err, distinct.ErrClosed) {
		t.Fatalf("Work on a closed queue returned %v, want ErrClosed", err)
	}
	if st := q.Stats(); st.Completed != 3 || st.InProgress != 0 || q.Len() != 0 {
		t.Fatalf("after Work drained the queue: %+v", st)
	}
}

func TestWorkStopsOnceCancelled(t *testing.T) {
	t.Parallel()
	q := newQueue[int](t, distinct.Config{})
	q.AddAll([]int{1, 2, 3})
	ctx, cancel := context.WithCancel(context.Background())
	var seen []int
	err := q.Work(ctx, 1, func(_ context.Context, items []int) error {
		seen = append(seen, items...)
		cancel() // f succeeds, but Work must take no further batch
		return nil
	})
	if !errors.Is(err, context.Canceled) || !slices.Equal(seen, []int{1}) {
		t.Fatalf("Work = %v after processing %v, want context.Canceled after [1]", err, seen)
	}
	wantQueued(t, q, 2, 3)
	if st := q.Stats(); st.Completed != 1 || st.InProgress != 0 || st.Requeued != 0 {
		t.Fatalf("Stats = %+v", st)
	}
}

// TestGoexitPutsTheBatchBack checks that a function that ends its goroutine
// with runtime.Goexit (as t.FailNow does) does not strand its batch in
// progress: the items go back as failed.
func TestGoexitPutsTheBatchBack(t *testing.T) {
	t.Parallel()
	for name, consume := range map[string]func(*distinct.Queue[int], func(context.Context, []int) error) error{
		"Process": func(q *distinct.Queue[int], f func(context.Context, []int) error) error {
			return q.Process(context.Background(), 2, f)
		},
		"Work": func(q *distinct.Queue[int], f func(context.Context, []int) error) error {
			return q.Work(context.Background(), 2, f)
		},
	} {
		q := newQueue[int](t, distinct.Config{})
		q.AddAll([]int{1, 2, 3})
		exited := make(chan struct{})
		go func() {
			defer close(exited)
			_ = consume(q, func(context.Context, []int) error {
				runtime.Goexit()
				return nil
			})
		}()
		<-exited
		wantQueued(t, q, 1, 2, 3)
		if st := q.Stats(); st.InProgress != 0 || st.Requeued != 2 {
			t.Errorf("%s: Stats after Goexit = %+v, want 0 in progress, 2 requeued", name, st)
		}
	}
}

func TestRemove(t *testing.T) {
	t.Parallel()
	q := newQueue[int](t, distinct.Config{})
	q.AddAll([]int{1, 2, 3, 4})
	_, s := takeIn(t, q, 2) // 1 2
	if q.Remove(1) {
		t.Error("Remove of an in-progress item reported true")
	}
	if !q.Remove(3) || q.Remove(3) {
		t.Error("Remove(3) twice did not report true then false")
	}
	q.Add(3) // back, at the tail
	wantQueued(t, q, 4, 3)
	s.Close(scope.Failed(nil))
	wantQueued(t, q, 1, 2, 4, 3)
	if !q.Remove(1) { // a retried item
		t.Fatal("Remove(1) = false")
	}
	q.Add(1)
	wantQueued(t, q, 2, 4, 3, 1)
	items, s2 := takeIn(t, q, 10)
	if !slices.Equal(items, []int{2, 4, 3, 1}) {
		t.Fatalf("Take after removes = %v", items)
	}
	s2.Close(scope.Succeeded())
	if st := q.Stats(); st.Removed != 2 || st.Queued != 0 {
		t.Errorf("Stats = %+v", st)
	}
}

func TestManyRemovesCompact(t *testing.T) {
	t.Parallel()
	q := newQueue[int](t, distinct.Config{})
	var want []int
	for i := range 1000 {
		q.Add(i)
		if i%3 != 0 {
			want = append(want, i)
		}
	}
	for i := 0; i < 1000; i += 3 {
		q.Remove(i)
		q.Add(i) // re-added at the tail
	}
	for i := 0; i < 1000; i += 3 {
		want = append(want, i)
	}
	wantQueued(t, q, want...)
	items, s := takeIn(t, q, 2000)
	if !slices.Equal(items, want) {
		t.Fatalf("Take returned %d items, not the queued order", len(items))
	}
	s.Close(scope.Succeeded())
}

func TestRerunAddsInProgressItemOnceMore(t *testing.T) {
	t.Parallel()
	q := newQueue[string](t, distinct.Config{Rerun: true})
	q.AddAll([]string{"a", "b"})
	_, s := takeIn(t, q, 1) // a
	if !q.Add("a") {
		t.Fatal("Add of an in-progress item under Rerun reported false")
	}
	if q.Add("a") {
		t.Error("second Add of a dirty item reported true")
	}
	wantQueued(t, q, "b")
	s.Close(scope.Succeeded())
	wantQueued(t, q, "b", "a")

	// A failed scope puts a dirty item back in its original position, once.
	q.AddAll([]string{"c"})
	items, s2 := takeIn(t, q, 1) // b
	q.Add(items[0])
	s2.Close(scope.Failed(nil))
	wantQueued(t, q, "b", "a", "c")
	info, _ := q.Info("b")
	if info.Collisions != 1 || info.Attempts != 1 {
		t.Errorf("Info(b) = %+v", info)
	}
}

func TestCapacity(t *testing.T) {
	t.Parallel()
	q := newQueue[int](t, distinct.Config{Capacity: 2})
	q.AddAll([]int{1, 2})
	if added, err := q.TryAdd(3); added || !errors.Is(err, distinct.ErrFull) {
		t.Fatalf("TryAdd on a full queue = %v, %v", added, err)
	}
	if q.Add(3) {
		t.Fatal("Add on a full queue reported true")
	}
	if added, err := q.TryAdd(1); added || err != nil {
		t.Errorf("TryAdd of a duplicate on a full queue = %v, %v", added, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	if _, err := func() (bool, error) {
		defer cancel()
		c, stop := context.WithCancel(ctx)
		stop()
		return q.AddWait(c, 3)
	}(); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled AddWait = %v", err)
	}

	done := make(chan error)
	go func() {
		added, err := q.AddWait(context.Background(), 3)
		if !added {
			err = errors.New("not added")
		}
		done <- err
	}()
	// In progress still counts: taking does not make room, completing does.
	_, s := takeIn(t, q, 1)
	s.Close(scope.Failed(nil)) // back in the queue: still full
	_, s = takeIn(t, q, 1)
	s.Close(scope.Succeeded())
	if err := <-done; err != nil {
		t.Fatalf("AddWait: %v", err)
	}
	wantQueued(t, q, 2, 3)
}

func TestCloseDrainsThenErrClosed(t *testing.T) {
	t.Parallel()
	q := newQueue[int](t, distinct.Config{Capacity: 3})
	q.AddAll([]int{1, 2, 3})
	blockedAdd := make(chan error)
	go func() { _, err := q.AddWait(context.Background(), 4); blockedAdd <- err }()

	_, s := takeIn(t, q, 1)
	q.Close()
	q.Close() // idempotent
	if err := <-blockedAdd; !errors.Is(err, distinct.ErrClosed) {
		t.Errorf("waiting AddWait after Close = %v", err)
	}
	if q.Add(9) {
		t.Error("Add after Close reported true")
	}
	if _, err := q.TryAdd(9); !errors.Is(err, distinct.ErrClosed) {
		t.Errorf("TryAdd after Close = %v", err)
	}
	items, s2 := takeIn(t, q, 5)
	if !slices.Equal(items, []int{2, 3}) {
		t.Fatalf("draining Take = %v", items)
	}
	if _, err := q.Take(context.Background(), scope.New(), 1); !errors.Is(err, distinct.ErrClosed) {
		t.Fatalf("Take on a closed, empty queue = %v", err)
	}
	// A failure after Close puts items back for a later Take: nothing is lost.
	s.Close(scope.Failed(nil))
	items, s3 := takeIn(t, q, 5)
	if !slices.Equal(items, []int{1}) {
		t.Fatalf("Take after a late failure = %v", items)
	}

	drained := make(chan error)
	go func() { drained <- q.Drain(context.Background()) }()
	s2.Close(scope.Succeeded())
	s3.Close(scope.Succeeded())
	if err := <-drained; err != nil {
		t.Fatalf("Drain: %v", err)
	}
}

func TestCloseWakesBlockedTakers(t *testing.T) {
	t.Parallel()
	q := newQueue[int](t, distinct.Config{})
	errs := make(chan error)
	for range 4 {
		go func() {
			_, err := q.Take(context.Background(), scope.New(), 1)
			errs <- err
		}()
	}
	q.Close()
	for range 4 {
		if err := <-errs; !errors.Is(err, distinct.ErrClosed) {
			t.Fatalf("blocked Take after Close = %v", err)
		}
	}
}

func TestDrainHonoursContext(t *testing.T) {
	t.Parallel()
	q := newQueue[int](t, distinct.Config{})
	q.Add(1)
	_, s := takeIn(t, q, 1)
	defer s.Close(scope.Succeeded())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := q.Drain(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Drain with an item in progress = %v", err)
	}
}

func TestTakeUnderScopeClosedConcurrently(t *testing.T) {
	t.Parallel()
	// Whatever the interleaving, an item is either handed out under an open
	// scope or left queued: never completed by a scope that closed first.
	for range 200 {
		q := newQueue[int](t, distinct.Config{})
		q.Add(1)
		s := scope.New()
		go s.Close(scope.Succeeded())
		items, err := q.Take(context.Background(), s, 1)
		s.Close(scope.Succeeded())
		switch {
		case errors.Is(err, scope.ErrClosed):
			wantQueued(t, q, 1)
		case err == nil:
			if !slices.Equal(items, []int{1}) || q.Stats().Completed != 1 {
				t.Fatalf("Take = %v, Stats %+v", items, q.Stats())
			}
		default:
			t.Fatal(err)
		}
	}
}
