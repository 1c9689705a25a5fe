// Package testkit holds what jobkit's tests in several packages share; only
// test files import it.
package testkit

import (
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
