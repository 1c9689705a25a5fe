package distinct_test

import (
	"context"
	"runtime"
	"testing"
	"weak"

	"github.com/jobkit/jobkit/distinct"
	"github.com/jobkit/jobkit/scope"
)

// An item settled early, with Complete or with Fail and then completed by
// another taker, is kept by nothing of the queue while the scope it was
// taken under stays open: that scope holds its batch, which must not hold
// the item.
func TestAnItemSettledEarlyIsCollectableBeforeItsScopeCloses(t *testing.T) {
	t.Parallel()
	type job struct{ _ [1 << 10]byte }
	q := newQueue[*job](t, distinct.Config{})
	var refs []weak.Pointer[job]
	for range 3 {
		j := new(job)
		refs = append(refs, weak.Make(j))
		q.Add(j)
	}
	s := scope.New()
	items, err := q.Take(context.Background(), s, 3)
	if err != nil || len(items) != 3 {
		t.Fatalf("Take = %v, %v", items, err)
	}
	if !q.Complete(s, items[0]) || !q.Fail(s, items[1]) {
		t.Fatal("Complete or Fail of an item in progress under s reported false")
	}
	// The failed item is back in the queue; another taker completes it.
	if err := q.Process(context.Background(), 1, func(context.Context, []*job) error { return nil }); err != nil {
		t.Fatal(err)
	}
	keep := items[2] // still in progress under s
	items = nil
	runtime.GC()
	for i, w := range refs[:2] {
		if w.Value() != nil {
			t.Errorf("item %d, completed, is still reachable while the scope it was taken under is open", i)
		}
	}
	if err := s.Close(scope.Succeeded()); err != nil {
		t.Fatal(err)
	}
	if st := q.Stats(); st.Completed != 3 || st.Queued != 0 || st.InProgress != 0 {
		t.Errorf("Stats = %+v; want 3 completed, nothing held", st)
	}
	runtime.KeepAlive(keep)
}
