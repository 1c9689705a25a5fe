package panicval

import (
	"runtime"
	"testing"
)

// goexits's String ends the goroutine that formats it.
type goexits struct{}

func (goexits) String() string {
	runtime.Goexit()
	return "unreachable"
}

// TestStringOfAValueWhoseStringCallsGoexit checks that String returns, in
// the caller's goroutine, for a value whose String method calls
// runtime.Goexit: that ended the caller's goroutine, which for the
// governor is the sampling goroutine handling a fault.
func TestStringOfAValueWhoseStringCallsGoexit(t *testing.T) {
	done := make(chan string, 1)
	go func() {
		defer close(done)
		done <- String(goexits{})
	}()
	got, ok := <-done
	if want := "(a panicval.goexits whose formatting called runtime.Goexit)"; !ok || got != want {
		t.Errorf("String(goexits{}) = %q, returned %v; want %q", got, ok, want)
	}
}
