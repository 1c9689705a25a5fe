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

// call calls f, a call of the handler, on a goroutine of its own (see
// guardedHandler) and waits for it.
func (guardedHandler) call(f func()) { isolate.Call(func() { inHandler(f) }) }

// inHandler calls f. It is the frame by which Stop knows the goroutine of
// a handler's call as one the scheduler waits on (see onOwnGoroutine).
//
//go:noinline
func inHandler(f func()) { f() }

func (g guardedHandler) Enabled(ctx context.Context, l slog.Level) (ok bool) {
	g.call(func() { ok = g.h.Enabled(ctx, l) })
	return ok
}

func (g guardedHandler) Handle(ctx context.Context, r slog.Record) error {
	err := errHandlerFault
	g.call(func() { err = g.h.Handle(ctx, r) })
	return err
}

func (g guardedHandler) WithAttrs(as []slog.Attr) slog.Handler {
	h := g.h
	g.call(func() { h = g.h.WithAttrs(as) })
	if h == nil {
		return g
	}
	return guardedHandler{h}
}

func (g guardedHandler) WithGroup(name string) slog.Handler {
	h := g.h
	g.call(func() { h = g.h.WithGroup(name) })
	if h == nil {
		return g
	}
	return guardedHandler{h}
}
