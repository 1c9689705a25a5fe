package scope_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jobkit/jobkit/internal/testkit"
	"github.com/jobkit/jobkit/scope"
)

// Under GODEBUG=panicnil=1 (a setting Go keeps for old code), panic(nil)
// makes recover return nil, so it cannot be told from runtime.Goexit: Run
// and Call report it as ErrGoexit, a failure, never a success. Before, Run
// returned nil (while its finalizer saw ErrGoexit) and Call a success. The
// test runs in a child process with that setting.
func TestPanicNilUnderGODEBUGIsNotASuccess(t *testing.T) {
	if testkit.InChild(t, "GODEBUG=panicnil=1") {
		var seen scope.Exit
		err := scope.Run(context.Background(), func(ctx context.Context, s *scope.Scope) error {
			s.Defer(func(e scope.Exit) error { seen = e; return nil })
			panic(testkit.NilValue())
		})
		if !errors.Is(err, scope.ErrGoexit) || !errors.Is(seen.Err(), scope.ErrGoexit) {
			t.Errorf("Run of panic(nil) returned %v, its finalizer saw %v; want ErrGoexit both", err, seen)
		}
		exit, err := scope.Call(context.Background(), func(context.Context) error { panic(testkit.NilValue()) })
		if !errors.Is(err, scope.ErrGoexit) || !exit.Failed() {
			t.Errorf("Call of panic(nil) gave exit %v, error %v; want a failure with ErrGoexit", exit, err)
		}
	}
}
