package core

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
)

func TestGateReadersShareWritersExclude(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var q Queue[int]
		q.rlock()
		q.rlock() // readers run in parallel: a second one gets in at once

		var order []string
		wrote := make(chan struct{})
		go func() {
			q.lock()
			order = append(order, "writer")
			q.mu.Unlock()
			close(wrote)
		}()
		synctest.Wait() // the writer waits for the readers
		read := make(chan struct{})
		go func() {
			q.rlock() // a waiting writer keeps new readers out
			order = append(order, "late reader")
			q.runlock()
			close(read)
		}()
		synctest.Wait()
		if len(order) != 0 {
			t.Fatalf("ran while readers held the gate: %v", order)
		}
		q.runlock()
		q.runlock()
		<-wrote
		<-read
		if len(order) != 2 || order[0] != "writer" {
			t.Fatalf("order %v: the waiting writer must go before the later reader", order)
		}
	})
}

func TestSnapshotWaitsForNoWriterButWritesWaitForSnapshot(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var q Queue[int]
		q.Add(1)
		q.rlock()
		added := make(chan bool)
		go func() { added <- q.Add(2) }()
		synctest.Wait()
		select {
		case <-added:
			t.Fatal("Add ran while a snapshot held the read side")
		default:
		}
		q.runlock()
		if !<-added {
			t.Fatal("Add(2) = false")
		}
	})
}

// TestWorkSettlesWhenLockCancelled checks the path where Work's context is
// done while a reader holds the gate, so that Work never takes the lock to
// take its next batch: the batch it processed must still be completed.
func TestWorkSettlesWhenLockCancelled(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var q Queue[int]
		q.AddAll([]int{1, 2})
		ctx, cancel := context.WithCancel(t.Context())
		errs := make(chan error)
		go func() {
			errs <- q.Work(ctx, 1, func(context.Context, []int) error {
				q.rlock() // a snapshot in progress
				cancel()
				return nil
			})
		}()
		synctest.Wait() // Work gave up the take and waits to settle
		q.runlock()
		if err := <-errs; !errors.Is(err, context.Canceled) {
			t.Fatalf("Work returned %v, want context.Canceled", err)
		}
		if st := q.Stats(); st.Completed != 1 || st.InProgress != 0 || st.Queued != 1 {
			t.Fatalf("Stats = %+v, want 1 completed, 0 in progress, 1 queued", st)
		}
	})
}
