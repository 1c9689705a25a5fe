package scope

import (
	"reflect"
	"runtime"
	"sync"

	"github.com/jobkit/jobkit/internal/stack"
)

// A block is scopes allocated together: New and Run hand them out one by one
// and never reuse one, so that a *Scope kept past its use stays what it was.
// A block stays in memory while any of its scopes is referenced.
type block struct {
	scopes [blockSize]Scope
	next   int
}

const blockSize = 292 // 292 scopes of 56 bytes and the index fill a 16 KiB size class

// blocks holds the partly used block of each P.
var blocks sync.Pool

// newScope returns a new, open scope from a block.
func newScope() *Scope {
	b, _ := blocks.Get().(*block)
	if b == nil {
		b = new(block)
	}
	s := &b.scopes[b.next]
	if b.next++; b.next < blockSize {
		blocks.Put(b)
	}
	return s
}

// finalizeFunc is the name of finalize in stack traces.
var finalizeFunc = runtime.FuncForPC(reflect.ValueOf(finalize).Pointer()).Name()

// inFinalizer reports whether the calling goroutine is running a finalizer:
// whether finalize is on its stack. It walks the stack, so it is only for
// slow paths.
func inFinalizer() bool {
	return stack.Within(func(fn string) bool { return fn == finalizeFunc })
}
