package stack

import (
	"strings"
	"testing"
)

//go:noinline
func marker(f func() bool) bool { return f() }

// deep calls f under n more frames.
func deep(n int, f func() bool) bool {
	if n == 0 {
		return f()
	}
	return deep(n-1, f)
}

func TestWithin(t *testing.T) {
	t.Parallel()
	isMarker := func(fn string) bool { return strings.HasSuffix(fn, "stack.marker") }
	if Within(isMarker) {
		t.Error("found marker outside it")
	}
	if !marker(func() bool { return Within(isMarker) }) {
		t.Error("did not find marker inside it")
	}
	// Past the first 64 frames, which the walk reads in chunks.
	if !marker(func() bool { return deep(200, func() bool { return Within(isMarker) }) }) {
		t.Error("did not find marker 200 frames down")
	}
}
