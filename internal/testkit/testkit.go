// Package testkit holds what jobkit's tests in several packages share; only
// test files import it.
package testkit

import (
	"os"
	"os/exec"
	"regexp"
	"testing"
	"time"
)

// Within calls f on a goroutine of its own and fails tb if f has not
// returned within ten seconds of real time: for code that hangs or spins
// when it is broken (a lock left held, a chain of errors walked for ever).
// It is for tests outside a synctest bubble. The goroutine of an f that
// never returns is left behind, and goleak reports it too.
func Within(tb testing.TB, what string, f func()) {
	tb.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		tb.Fatalf("%s did not return within ten seconds", what)
	}
}

// Cycle is an error that wraps itself: errors.Is and errors.As walk its
// chain for ever.
type Cycle struct{}

func (e *Cycle) Error() string { return "cycle" }

// Unwrap returns e itself.
func (e *Cycle) Unwrap() error { return e }

// NilValue returns nil, for a test's panic(nil) that linters do not flag.
func NilValue() any { return nil }

// InChild runs the calling test again, alone, in a child process whose
// environment adds env (NAME=value pairs) and a marker, and fails tb if the
// child fails, with the start of its output. In the child it returns true
// at once: the test then does its work there, and returns (or exits) when
// done. It is for what must not happen in the test binary itself: a
// process-wide GODEBUG setting, or a crash that no recover catches. The
// calling test must be a top-level test.
func InChild(tb testing.TB, env ...string) bool {
	tb.Helper()
	const marker = "JOBKIT_TESTKIT_CHILD"
	if os.Getenv(marker) == tb.Name() {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+regexp.QuoteMeta(tb.Name())+"$", "-test.count=1", "-test.v")
	cmd.Env = append(append(os.Environ(), marker+"="+tb.Name()), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("the child process failed: %v\n%.2000s", err, out)
	}
	return false
}

// Stubborn is a panic value that cannot be formatted: its String method
// panics with a Stubborn. fmt recovers the first panic of a String method
// but panics again on this nested one.
type Stubborn struct{}

func (Stubborn) String() string { panic(Stubborn{}) }
