package props

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/jobkit/jobkit/scope"
)

// TestScopeMatchesModel registers finalizers that succeed, fail or panic,
// closes the scope with a random exit, keeps adding afterwards, and checks
// against a model: finalizers run in reverse order of registration, each
// exactly once, all of them, each seeing the scope's exit; Close returns
// every failure and panic; late finalizers run at once.
func TestScopeMatchesModel(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		s := scope.New()
		var (
			registered []int        // model: ids in registration order
			ran        []int        // ids in the order they ran
			saw        []scope.Exit // the exit each run saw
			wantErrs   []error      // errors the model expects Close to return
			panics     int
			closed     bool
			exit       scope.Exit
		)
		next := 0
		kind := rapid.SampledFrom([]string{"ok", "error", "panic"})
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
				err := s.Add(f)
				if !closed {
					if err != nil || len(ran) != before {
						t.Fatalf("Add to an open scope: err %v, ran %v", err, ran[before:])
					}
					registered = append(registered, id)
					if k != "ok" {
						wantErrs = append(wantErrs, ferr)
					}
					if k == "panic" {
						panics++
					}
					return
				}
				// Closed: runs at once, with the scope's exit, returning its error.
				if len(ran) != before+1 || ran[before] != id || saw[before] != exit {
					t.Fatalf("late finalizer %d: ran %v, saw %v", id, ran[before:], saw[before:])
				}
				if (k == "ok") != (err == nil) || (err != nil && !errors.Is(err, ferr)) {
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
				err := s.Close(e)
				if closed { // idempotent: nothing runs again
					if err != nil || len(ran) != before {
						t.Fatalf("second Close: err %v, ran %v", err, ran[before:])
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
	})
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
