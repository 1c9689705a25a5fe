package distinct_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"weak"

	"github.com/jobkit/jobkit/distinct"
	"github.com/jobkit/jobkit/scope"
)

// TestGarbageCollection checks that the queue keeps nothing of an item once
// it completes, whatever path it took (in the style of client-go's test of
// the same name).
func TestGarbageCollection(t *testing.T) {
	t.Parallel()
	type job struct{ _ [1 << 10]byte }
	q := newQueue[*job](t, distinct.Config{Rerun: true})
	var refs []weak.Pointer[job]
	for range 100 {
		j := new(job)
		refs = append(refs, weak.Make(j))
		q.Add(j)
	}
	ctx := context.Background()
	// Fail some, re-add some while in progress, settle some early, then
	// complete everything.
	items, s := takeIn(t, q, 10)
	q.Add(items[0]) // Rerun: runs once more
	q.Complete(s, items[1])
	q.Fail(s, items[2])
	s.Close(scope.Failed(errors.New("x")))
	for q.Len() > 0 {
		if err := q.Process(ctx, 7, func(context.Context, []*job) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	items, s = nil, nil
	runtime.GC()
	runtime.GC()
	for i, w := range refs {
		if w.Value() != nil {
			t.Fatalf("item %d is still reachable after completing", i)
		}
	}
	if st := q.Stats(); st.Completed != 100 || st.Added != 101 { // the Rerun add merged into the failure
		t.Errorf("Stats = %+v", st)
	}
	runtime.KeepAlive(q)
}
