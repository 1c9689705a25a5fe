// Package scope gives work a lifetime with finalizers that see how it ended,
// in the style of ZIO's Scope.
//
// A [Scope] collects finalizers while it is open. Closing it with an [Exit]
// runs them:
//
//   - in reverse order of registration (LIFO), each exactly once;
//   - all of them, even when one returns an error or panics; errors and
//     recovered panics are joined into the error Close returns;
//   - each one sees the Exit, so a finalizer can commit on success and roll
//     back on failure.
//
// An Exit is one of four kinds: [KindSuccess], [KindFailure] (an error),
// [KindPanic] (a recovered value and its stack, as a [*PanicError]) and
// [KindInterrupted] (the context was cancelled; the Exit carries its cause).
// Panic and interruption count as failure: [Exit.Failed] reports true for
// every kind but success.
//
// [Run] is the usual entry point: it opens a scope, runs a function, turns a
// panic into a returned *PanicError carrying the value and stack, closes the
// scope with the Exit that matches what the function did, and returns.
// Cancellation is cooperative: a function that returns nil succeeds even if
// its context was cancelled meanwhile; an error caused by the cancellation is
// an interruption; any other error is a failure. [Call] applies the same rules
// without a scope, for code that settles work itself.
//
// [AcquireRelease] pairs an acquisition with a release that sees the Exit,
// like ZIO's acquireReleaseExit.
package scope
