package scope

import (
	"context"
	"fmt"
)

// errNilArg is returned by Run, Call and AcquireRelease for a nil argument.
var errNilArg = fmt.Errorf("%w: nil context, scope or function", ErrInvalid)

// Run opens a scope, calls f with ctx and the scope, and closes the scope with
// the Exit that matches what f did (see [ExitOf]): nil is a success, an error
// caused by ctx's cancellation an interruption, a panic a panic, anything else
// a failure. A panic in f does not propagate: Run returns it as a *PanicError
// carrying the value and stack. Run returns f's error joined with the
// finalizers' errors, or nil.
//
// If f calls runtime.Goexit (as testing.T.FailNow does), Run closes the scope
// with a failure whose error is [ErrGoexit], so that every finalizer runs,
// and lets the goroutine go on exiting. Under GODEBUG=panicnil=1 a
// panic(nil) cannot be told from that: Run closes the scope the same way
// and returns ErrGoexit. A nil ctx or f is refused with an
// error wrapping [ErrInvalid].
//
// Run allocates nothing in steady state but what f and the finalizers do
// (a scope costs a 292nd of an allocation; see [Scope]); most of its time
// goes to the fresh 56 bytes of the scope and the pool its block comes
// from, the price of a *Scope that is never reused. Figures: BenchmarkRun,
// bench/RESULTS.md in the repository, section 6.3.
func Run(ctx context.Context, f func(ctx context.Context, s *Scope) error) (err error) {
	if ctx == nil || f == nil {
		return errNilArg
	}
	s := newScope()
	exit := Failed(ErrGoexit) // unless f returns or panics
	returned := false
	defer func() {
		if v := recover(); v != nil {
			p := recovered(v)
			exit, err = Exit{kind: KindPanic, err: p}, p
		} else if !returned {
			// Goexit, whose goroutine never sees this error; or, under
			// GODEBUG=panicnil=1, a panic(nil), which recover cannot tell
			// from it: not a success.
			err = ErrGoexit
		}
		err = join(err, s.Close(exit))
	}()
	err = f(ctx, s)
	returned = true
	exit = ExitOf(ctx, err)
	return err
}

// AcquireRelease acquires a resource and registers its release on s, in the
// style of ZIO's acquireReleaseExit: release runs when s closes and sees the
// scope's Exit, so it can commit on success and roll back on failure.
//
// If acquire fails (returns an error or panics), nothing is registered and
// AcquireRelease returns the error. If s is already closed, AcquireRelease
// does not call acquire and returns [ErrClosed]. If s closes while acquire is
// running, release runs at once with s's Exit and AcquireRelease returns the
// zero R and ErrClosed joined with release's error. A nil argument is refused
// with an error wrapping [ErrInvalid].
func AcquireRelease[R any](ctx context.Context, s *Scope, acquire func(context.Context) (R, error), release func(R, Exit) error) (R, error) {
	var zero R
	if ctx == nil || s == nil || acquire == nil || release == nil {
		return zero, errNilArg
	}
	if s.Closed() {
		return zero, ErrClosed
	}
	var r R
	if _, err := Call(ctx, func(ctx context.Context) error {
		var err error
		r, err = acquire(ctx)
		return err
	}); err != nil {
		return zero, err
	}
	f := FinalizerFunc(func(exit Exit) error { return release(r, exit) })
	if s.TryAdd(f) {
		return r, nil
	}
	return zero, join(ErrClosed, s.Add(f))
}
