package sched

import (
	"errors"
	"log/slog"

	"github.com/jobkit/jobkit/internal/isolate"
	"github.com/jobkit/jobkit/internal/safelog"
)

// guardLogger returns l with its handler guarded (see safelog.Guard): a
// handler that panics or ends its goroutine (runtime.Goexit) loses only
// its record. The scheduler logs on its fault paths alone (a failing
// backend, Clock or metric, an abandoned run), often in a goroutine's way
// out, where a second fault would strand what that goroutine holds; the
// goroutine a record costs is paid only there.
func guardLogger(l *slog.Logger) *slog.Logger {
	return safelog.Guard(l, isolated, errHandlerFault)
}

// errHandlerFault is what the guarded handler's Handle returns when the
// handler panicked or ended its goroutine.
var errHandlerFault = errors.New("sched: the logger's handler panicked or called runtime.Goexit")

// isolated calls f, a user's callback, through isolate.Call: on a goroutine
// of its own, so that its panic or runtime.Goexit ends only that one. It
// reports whether f returned. If the caller is one of the scheduler's
// goroutines, f runs under the frame onBehalf, by which Stop knows f's
// goroutine as one the scheduler waits on (see onOwnGoroutine); f called
// for a user's goroutine (a record of Scheduler.Logger, a DelayAfter)
// stays the user's, so that a Stop from it waits as from its caller. The
// stack walk and the goroutine are for slow paths: a failed run with a
// Delay of its own, a record logged.
func isolated(f func()) bool {
	if onOwnGoroutine() {
		return isolate.Call(func() { onBehalf(f) })
	}
	return isolate.Call(f)
}

// onBehalf calls f. It is the frame of a callback that one of the
// scheduler's goroutines waits on.
//
//go:noinline
func onBehalf(f func()) { f() }
