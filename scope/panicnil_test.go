package scope_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/jobkit/jobkit/internal/testkit"
	"github.com/jobkit/jobkit/scope"
)

// Under GODEBUG=panicnil=1 (a setting Go keeps for old code), panic(testkit.NilValue())
// makes recover return nil, so it cannot be told from runtime.Goexit: Run
// and Call report it as ErrGoexit, a failure, never a success. Before, Run
// returned nil (while its finalizer saw ErrGoexit) and Call a success. The
// test runs in a child process with that setting.
func TestPanicNilUnderGODEBUGIsNotASuccess(t *testing.T) {
	if os.Getenv("JOBKIT_PANICNIL_CHILD") == "1" {
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
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPanicNilUnderGODEBUGIsNotASuccess$", "-test.v")
	cmd.Env = append(os.Environ(), "JOBKIT_PANICNIL_CHILD=1", "GODEBUG=panicnil=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child failed: %v\n%s", err, out)
	}
}
