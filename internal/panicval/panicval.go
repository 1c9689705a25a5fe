// Package panicval formats the value of a recovered panic, which is the
// user's (a handler's, a sampler's, a callback's), without panicking again
// or ending the goroutine that formats it.
//
// fmt recovers a panic in a value's String or Error method and prints it in
// its place, but it cannot print a panic whose own value panics as it is
// printed: it panics again then. A value whose String method panics with
// such a value would so crash the goroutine that merely logs the recovered
// panic, or the process if nothing recovers there. Nor can fmt stop a
// String method that calls runtime.Goexit (as t.FailNow does): that ends
// the goroutine formatting the value, which may be one that must go on,
// such as the governor's sampling goroutine as it handles a fault.
package panicval

import (
	"fmt"

	"github.com/jobkit/jobkit/internal/isolate"
)

// String returns v formatted with %v, or, if that panics or calls
// runtime.Goexit, its type and the fact. It formats on a goroutine of its
// own (isolate.Call), so that a Goexit ends that goroutine and not the
// caller's: a panic's value is formatted on slow paths only.
func String(v any) (s string) {
	s = fmt.Sprintf("(a %T whose formatting called runtime.Goexit)", v)
	isolate.Call(func() {
		defer func() {
			if recover() != nil {
				s = fmt.Sprintf("(a %T whose formatting panicked)", v)
			}
		}()
		s = fmt.Sprint(v)
	})
	return s
}
