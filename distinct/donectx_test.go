package distinct_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/jobkit/jobkit/distinct"
	"github.com/jobkit/jobkit/scope"
)

// Take's doc: "A ctx that is already done when Take is called does not stop
// it from taking items that are queued ... Take fails with ctx's error only
// when it would have to wait". A Take with a done ctx and items queued
// takes them while a snapshot (Queued) runs, waiting for the snapshot as
// Add does. Before, it gave up on the snapshot with ctx's error.
func TestADoneContextTakesWhileASnapshotRuns(t *testing.T) {
	q := newQueue[int](t, distinct.Config{})
	const n = 1 << 16
	xs := make([]int, n)
	for i := range xs {
		xs[i] = i
	}
	q.AddAll(xs)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stop atomic.Bool
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		for !stop.Load() {
			_ = q.Queued()
		}
	}()
	defer func() { stop.Store(true); <-readerDone }()
	for i := range 3000 {
		s := scope.New()
		_, err := q.Take(ctx, s, 1)
		s.Close(scope.Failed(nil)) // put it back
		if errors.Is(err, context.Canceled) {
			t.Fatalf("Take with a done ctx and %d items queued returned %v (attempt %d)", q.Len(), err, i)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
