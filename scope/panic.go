package scope

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/jobkit/jobkit/internal/panicval"
)

// PanicError is a recovered panic: the value passed to panic and the stack of
// the goroutine that panicked, captured where it was recovered. Match it with
// [errors.As].
type PanicError struct {
	// Value is the value passed to panic.
	Value any
	// Stack is the panicking goroutine's stack, as [debug.Stack] formats it.
	Stack []byte
}

// Error returns "panic: " followed by the value and the stack. A nil
// *PanicError gives "panic: <nil>".
func (p *PanicError) Error() string {
	if p == nil {
		return "panic: <nil>"
	}
	return fmt.Sprintf("panic: %s\n\n%s", panicval.String(p.Value), p.Stack)
}

// Unwrap returns the panic value when it is an error, so that errors.Is and
// errors.As see through a panic(err); otherwise, and for a nil *PanicError,
// it returns nil.
func (p *PanicError) Unwrap() error {
	if p == nil {
		return nil
	}
	err, _ := p.Value.(error)
	return err
}

// recovered turns a value returned by recover into a *PanicError carrying the
// current stack. It must be called from the deferred function that recovered.
func recovered(v any) *PanicError {
	return &PanicError{Value: v, Stack: debug.Stack()}
}

// Call runs f with ctx and classifies what it did: it returns f's error, or a
// *PanicError if f panicked (the panic does not propagate), together with the
// Exit [ExitOf] gives for that error. Call is the scope-free core of [Run], for
// code that settles its own work from the Exit.
//
// A nil f is refused: Call returns a failed Exit and an error wrapping
// [ErrInvalid]. A nil ctx is passed to f as it is. If f calls
// runtime.Goexit, Call does not return. Under GODEBUG=panicnil=1 a
// panic(nil) cannot be told from that: Call returns a failed Exit and
// [ErrGoexit].
func Call(ctx context.Context, f func(context.Context) error) (exit Exit, err error) {
	if f == nil {
		return Failed(errNilArg), errNilArg
	}
	returned := false
	defer func() {
		if v := recover(); v != nil {
			p := recovered(v)
			exit, err = Exit{kind: KindPanic, err: p}, p
		} else if !returned {
			// Goexit, whose goroutine never sees these; or, under
			// GODEBUG=panicnil=1, a panic(nil), which recover cannot tell
			// from it: not a success.
			exit, err = Failed(ErrGoexit), ErrGoexit
		}
	}()
	err = f(ctx)
	returned = true
	return ExitOf(ctx, err), err
}
