package scope

import (
	"context"
	"errors"
)

// errNilArg is returned by Run and AcquireRelease for a nil argument.
var errNilArg = errors.New("scope: nil context, scope or function")

// Run opens a scope, calls f with ctx and the scope, and closes the scope with
// the Exit that matches what f did (see [ExitOf]): nil is a success, an error
// caused by ctx's cancellation an interruption, a panic a panic, anything else
// a failure. A panic in f does not propagate: Run returns it as a *PanicError
// carrying the value and stack. Run returns f's error joined with the
// finalizers' errors, or nil.
func Run(ctx context.Context, f func(ctx context.Context, s *Scope) error) error {
	if ctx == nil || f == nil {
		return errNilArg
	}
	s := new(Scope)
	exit, err := Call(ctx, func(ctx context.Context) error { return f(ctx, s) })
	return join(err, s.Close(exit))
}

// AcquireRelease acquires a resource and registers its release on s, in the
// style of ZIO's acquireReleaseExit: release runs when s closes and sees the
// scope's Exit, so it can commit on success and roll back on failure.
//
// If acquire fails (returns an error or panics), nothing is registered and
// AcquireRelease returns the error. If s is already closed, AcquireRelease
// does not call acquire and returns [ErrClosed]. If s closes while acquire is
// running, release runs at once with s's Exit and AcquireRelease returns the
// zero R and ErrClosed joined with release's error.
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
