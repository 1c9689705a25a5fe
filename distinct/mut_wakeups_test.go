package distinct_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/jobkit/jobkit/distinct"
	"github.com/jobkit/jobkit/scope"
)

// Close must wake an AddWait that is already waiting for room on a full
// queue: it returns ErrClosed at once, not when room happens to appear.
func TestCloseWakesAnAdderWaitingForRoom(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue[int](t, distinct.Config{Capacity: 1})
		q.Add(0) // full
		res := make(chan error, 1)
		go func() { _, err := q.AddWait(context.Background(), 1); res <- err }()
		synctest.Wait() // the adder waits for room

		q.Close()
		synctest.Wait()
		select {
		case err := <-res:
			if !errors.Is(err, distinct.ErrClosed) {
				t.Errorf("AddWait waiting when the queue closed = %v, want ErrClosed", err)
			}
		default:
			t.Error("Close did not wake an AddWait waiting for room")
			q.Remove(0) // room: let it go
			<-res
		}
	})
}

// Close must wake a Take that is already waiting on an empty queue: it
// returns ErrClosed at once. (An item in progress elsewhere keeps Drain-like
// wake-ups of an emptied queue out of the picture.)
func TestCloseWakesATakerAlreadyWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue[int](t, distinct.Config{})
		q.Add(1)
		s0 := scope.New()
		if _, err := q.Take(context.Background(), s0, 1); err != nil {
			t.Fatal(err)
		}
		res := make(chan error, 1)
		go func() {
			_, err := q.Take(context.Background(), scope.New(), 1)
			res <- err
		}()
		synctest.Wait() // the taker waits for an item

		q.Close()
		synctest.Wait()
		select {
		case err := <-res:
			if !errors.Is(err, distinct.ErrClosed) {
				t.Errorf("Take waiting when the queue closed = %v, want ErrClosed", err)
			}
		default:
			t.Error("Close did not wake a Take waiting for items")
			s0.Close(scope.Succeeded()) // empties the closed queue: wakes it anyway
			<-res
		}
		s0.Close(scope.Succeeded())
	})
}

// A failed scope puts its items back; a Take already waiting on the empty
// queue must be woken and get them.
func TestFailedScopeWakesAWaitingTaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue[int](t, distinct.Config{})
		q.Add(1)
		s1 := scope.New()
		if _, err := q.Take(context.Background(), s1, 1); err != nil {
			t.Fatal(err)
		}
		type result struct {
			items []int
			err   error
		}
		res := make(chan result, 1)
		s2 := scope.New()
		go func() {
			items, err := q.Take(context.Background(), s2, 1)
			res <- result{items, err}
		}()
		synctest.Wait() // the taker waits for an item

		s1.Close(scope.Failed(errors.New("boom"))) // 1 goes back
		synctest.Wait()
		var r result
		select {
		case r = <-res:
		default:
			t.Error("an item put back by a failed scope did not wake a waiting Take")
			q.Add(2) // wakes it
			r = <-res
		}
		if r.err != nil || !slices.Equal(r.items, []int{1}) {
			t.Errorf("waiting Take = %v, %v; want [1], nil", r.items, r.err)
		}
		s2.Close(scope.Succeeded())
	})
}
