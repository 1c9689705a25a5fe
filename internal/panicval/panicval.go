// Package panicval formats the value of a recovered panic, which is the
// user's (a handler's, a sampler's, a callback's), without panicking again.
//
// fmt recovers a panic in a value's String or Error method and prints it in
// its place, but it cannot print a panic whose own value panics as it is
// printed: it panics again then. A value whose String method panics with
// such a value would so crash the goroutine that merely logs the recovered
// panic, or the process if nothing recovers there.
package panicval

import "fmt"

// String returns v formatted with %v, or, if that panics, its type and the
// fact.
func String(v any) (s string) {
	defer func() {
		if recover() != nil {
			s = fmt.Sprintf("(a %T whose formatting panicked)", v)
		}
	}()
	return fmt.Sprint(v)
}
