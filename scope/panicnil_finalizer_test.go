package scope_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jobkit/jobkit/internal/testkit"
	"github.com/jobkit/jobkit/scope"
)

// Under GODEBUG=panicnil=1 (a setting Go keeps for old code) a finalizer
// that panics with nil, which recover cannot tell from no panic, is a
// failure of the close, as a panic with a value is: not a finalizer that
// returned nil.
func TestAFinalizerThatPanicsNilFailsTheClose(t *testing.T) {
	if testkit.InChild(t, "GODEBUG=panicnil=1") {
		ran := false
		err := scope.Run(context.Background(), func(_ context.Context, s *scope.Scope) error {
			if err := s.Defer(func(scope.Exit) error { ran = true; return nil }); err != nil {
				return err
			}
			return s.Defer(func(scope.Exit) error { panic(testkit.NilValue()) })
		})
		if err == nil || !errors.Is(err, scope.ErrGoexit) {
			t.Errorf("Run with a finalizer that panics with nil = %v, want an error wrapping ErrGoexit", err)
		}
		if !ran {
			t.Error("the finalizer before it did not run")
		}
	}
}
