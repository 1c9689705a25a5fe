package props

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/jobkit/jobkit/scope"
)

// TestScopeMatchesModel registers finalizers that succeed, fail, panic or
// call runtime.Goexit, closes the scope with a random exit, keeps adding
// afterwards, and checks against a model: finalizers run in reverse order
// of registration, each exactly once, all of them, each seeing the scope's
// exit, also after one ends its goroutine; Close returns every failure and
// panic, or, if a finalizer called runtime.Goexit, does not return (its
// goroutine ends) and leaves the scope closed, so that a later Close
// returns; late finalizers run at once.
func TestScopeMatchesModel(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		// In a bubble: a Close or Add that waits for ever (for a scope
		// that a finalizer's Goexit left closing) fails the check as a
		// deadlock instead of hanging the test.
		rapid.SyncTest(t, scopeModel)
	})
}

func scopeModel(t *rapid.T) {
	s := scope.New()
	var (
		registered []int        // model: ids in registration order
		ran        []int        // ids in the order they ran
		saw        []scope.Exit // the exit each run saw
		wantErrs   []error      // errors the model expects Close to return
		panics     int
		goexits    int // registered finalizers that call runtime.Goexit
		closed     bool
		exit       scope.Exit
	)
	next := 0
	kind := rapid.SampledFrom([]string{"ok", "error", "panic", "ok", "error", "panic", "goexit"})
	finalizer := func(id int, k string) (scope.Finalizer, error) {
		err := fmt.Errorf("finalizer %d", id)
		return scope.FinalizerFunc(func(e scope.Exit) error {
			ran = append(ran, id)
			saw = append(saw, e)
			switch k {
			case "error":
				return err
			case "panic":
				panic(err)
			case "goexit":
				runtime.Goexit()
			}
			return nil
		}), err
	}
	t.Repeat(map[string]func(*rapid.T){
		"Add": func(t *rapid.T) {
			id, k := next, kind.Draw(t, "kind")
			next++
			f, ferr := finalizer(id, k)
			before := len(ran)
			var err error
			returned := onGoroutine(func() { err = s.Add(f) })
			if !closed {
				if !returned || err != nil || len(ran) != before {
					t.Fatalf("Add to an open scope: returned %v, err %v, ran %v", returned, err, ran[before:])
				}
				registered = append(registered, id)
				switch k {
				case "error":
					wantErrs = append(wantErrs, ferr)
				case "panic":
					wantErrs = append(wantErrs, ferr)
					panics++
				case "goexit":
					goexits++
				}
				return
			}
			// Closed: runs at once, with the scope's exit, returning its
			// error (or ending Add's goroutine).
			if len(ran) != before+1 || ran[before] != id || saw[before] != exit {
				t.Fatalf("late finalizer %d: ran %v, saw %v", id, ran[before:], saw[before:])
			}
			if returned != (k != "goexit") {
				t.Fatalf("late finalizer %d (%s): Add returned %v", id, k, returned)
			}
			if returned && ((k == "ok") != (err == nil) || (err != nil && !errors.Is(err, ferr))) {
				t.Fatalf("late finalizer %d (%s) returned %v", id, k, err)
			}
		},
		"Close": func(t *rapid.T) {
			e := rapid.SampledFrom([]scope.Exit{
				scope.Succeeded(),
				scope.Failed(errors.New("work failed")),
				scope.Panicked(&scope.PanicError{Value: "work panicked"}),
				scope.Interrupted(context.Canceled),
			}).Draw(t, "exit")
			before := len(ran)
			var err error
			returned := onGoroutine(func() { err = s.Close(e) })
			if closed { // idempotent: nothing runs again
				if !returned || err != nil || len(ran) != before {
					t.Fatalf("second Close: returned %v, err %v, ran %v", returned, err, ran[before:])
				}
				return
			}
			closed, exit = true, e
			want := slices.Clone(registered)
			slices.Reverse(want)
			if got := ran[before:]; !slices.Equal(got, want) {
				t.Fatalf("Close ran %v, want %v", got, want)
			}
			for i, seen := range saw[before:] {
				if seen != e {
					t.Fatalf("finalizer %d saw %v, want %v", ran[before+i], seen, e)
				}
			}
			if returned != (goexits == 0) {
				t.Fatalf("Close returned %v with %d finalizers that call runtime.Goexit", returned, goexits)
			}
			if !returned {
				return // Close's goroutine ended: its error is nobody's
			}
			for _, w := range wantErrs {
				if !errors.Is(err, w) {
					t.Fatalf("Close error %v lacks %v", err, w)
				}
			}
			if (len(wantErrs) == 0) != (err == nil) {
				t.Fatalf("Close returned %v, want %d errors", err, len(wantErrs))
			}
			if got := countPanics(err); got != panics {
				t.Fatalf("Close error carries %d panics, want %d", got, panics)
			}
		},
		"": func(t *rapid.T) {
			seen := map[int]bool{}
			for _, id := range ran {
				if seen[id] {
					t.Fatalf("finalizer %d ran twice", id)
				}
				seen[id] = true
			}
			if s.Closed() != closed {
				t.Fatalf("Closed() = %v, want %v", s.Closed(), closed)
			}
		},
	})
}

// onGoroutine runs f on a goroutine of its own and reports whether f
// returned: false if it called runtime.Goexit (a finalizer it ran did).
func onGoroutine(f func()) (returned bool) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
		returned = true
	}()
	<-done
	return returned
}

// countPanics counts the *scope.PanicErrors in err's tree.
func countPanics(err error) int {
	if err == nil {
		return 0
	}
	if _, ok := err.(*scope.PanicError); ok {
		return 1
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		n := 0
		for _, e := range j.Unwrap() {
			n += countPanics(e)
		}
		return n
	}
	return 0
}
