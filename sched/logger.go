package sched

import (
	"context"
	"errors"
	"log/slog"

	"github.com/jobkit/jobkit/internal/isolate"
)

// guardedHandler is the handler of the scheduler's logger: it calls
// Config.Logger's handler on a goroutine of its own and waits for it, so
// that a handler that panics or ends its goroutine (runtime.Goexit) loses
// only its record. The scheduler logs on its fault paths alone (a failing
// backend, Clock or metric, an abandoned run), often in a goroutine's way
// out, where a second fault would strand what that goroutine holds; the
// goroutine a record costs is paid only there.
type guardedHandler struct{ h slog.Handler }

// errHandlerFault is what Handle returns when the handler panicked or
// ended its goroutine.
var errHandlerFault = errors.New("sched: the logger's handler panicked or called runtime.Goexit")

// guardLogger returns l with its handler guarded.
func guardLogger(l *slog.Logger) *slog.Logger {
	if _, ok := l.Handler().(guardedHandler); ok {
		return l
	}
	return slog.New(guardedHandler{l.Handler()})
}

func (g guardedHandler) Enabled(ctx context.Context, l slog.Level) (ok bool) {
	isolated(func() { ok = g.h.Enabled(ctx, l) })
	return ok
}

func (g guardedHandler) Handle(ctx context.Context, r slog.Record) error {
	err := errHandlerFault
	isolated(func() { err = g.h.Handle(ctx, r) })
	return err
}

func (g guardedHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return g.with(func() slog.Handler { return g.h.WithAttrs(as) })
}

func (g guardedHandler) WithGroup(name string) slog.Handler {
	return g.with(func() slog.Handler { return g.h.WithGroup(name) })
}

// with returns the handler f derives from g's, guarded; or g if f faults
// or returns nil.
func (g guardedHandler) with(f func() slog.Handler) slog.Handler {
	var h slog.Handler
	isolated(func() { h = f() })
	if h == nil {
		return g
	}
	return guardedHandler{h}
}

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
