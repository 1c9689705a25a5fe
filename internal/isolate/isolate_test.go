package isolate

import (
	"runtime"
	"testing"
)

func TestCall(t *testing.T) {
	t.Parallel()
	ran := false
	if !Call(func() { ran = true }) || !ran {
		t.Error("a call that returns: want true, and f run")
	}
	if Call(func() { panic("bug") }) {
		t.Error("a call that panics: want false")
	}
	if Call(runtime.Goexit) {
		t.Error("a call that calls runtime.Goexit: want false")
	}
}
