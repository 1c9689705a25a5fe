package distinct_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jobkit/jobkit/distinct"
	"github.com/jobkit/jobkit/scope"
)

// Take under a scope that is already closed returns scope.ErrClosed at once,
// whatever the queue holds: it does not wait for items (so a done context
// does not turn it into ctx's error), and a closed, empty queue does not turn
// it into distinct.ErrClosed.
func TestTakeUnderAClosedScopeIsScopeErrClosed(t *testing.T) {
	q := newQueue[int](t, distinct.Config{})
	s := scope.New()
	s.Close(scope.Succeeded())
	done, stop := context.WithCancel(context.Background())
	stop()
	for i := range 3 {
		if _, err := q.Take(done, s, 1); !errors.Is(err, scope.ErrClosed) {
			t.Fatalf("%d: Take(done ctx, closed scope) on an empty queue = %v, want scope.ErrClosed", i, err)
		}
	}
	q.Close()
	if _, err := q.Take(context.Background(), s, 1); !errors.Is(err, scope.ErrClosed) {
		t.Fatalf("Take(closed scope) on a closed, empty queue = %v, want scope.ErrClosed", err)
	}
}

// Complete and Fail settle only items in progress under the scope they are
// given: a nil scope owns nothing, not even the items of Process or Work,
// which have no scope of the caller's.
func TestNilScopeSettlesNothing(t *testing.T) {
	q := newQueue[int](t, distinct.Config{})
	q.Add(1)
	q.Add(2)
	err := q.Process(context.Background(), 2, func(_ context.Context, items []int) error {
		if q.Complete(nil, items[0]) {
			t.Errorf("Complete(nil, %d) of an item of Process = true, want false", items[0])
		}
		if q.Fail(nil, items[1]) {
			t.Errorf("Fail(nil, %d) of an item of Process = true, want false", items[1])
		}
		for _, x := range items {
			if info, _ := q.Info(x); info.State != distinct.InProgress {
				t.Errorf("Info(%d) inside Process = %+v, want in progress", x, info)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if st := q.Stats(); st.Completed != 2 || st.Requeued != 0 || st.Queued != 0 {
		t.Errorf("Stats = %+v; want both completed by Process, none requeued", st)
	}
}
