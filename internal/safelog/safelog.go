// Package safelog guards a user's slog handler, so that one that panics or
// ends its goroutine (runtime.Goexit) loses only its record, not the
// goroutine that logged it.
package safelog

import (
	"context"
	"log/slog"
)

// Guard returns l with its handler guarded: each call of the handler runs
// through call, which runs its function on a goroutine of its own and
// waits for it (isolate.Call, or a caller's wrapper of it), and a Handle
// that faults returns fault. A logger Guard returned already is returned
// as it is. The goroutine is paid per record (and per Enabled): for
// loggers that log on slow paths.
func Guard(l *slog.Logger, call func(func()) bool, fault error) *slog.Logger {
	if _, ok := l.Handler().(handler); ok {
		return l
	}
	return slog.New(handler{l.Handler(), call, fault})
}

// handler is a guarded slog.Handler.
type handler struct {
	h     slog.Handler
	call  func(func()) bool
	fault error
}

func (g handler) Enabled(ctx context.Context, l slog.Level) (ok bool) {
	g.call(func() { ok = g.h.Enabled(ctx, l) })
	return ok
}

func (g handler) Handle(ctx context.Context, r slog.Record) error {
	err := g.fault
	g.call(func() { err = g.h.Handle(ctx, r) })
	return err
}

func (g handler) WithAttrs(as []slog.Attr) slog.Handler {
	return g.with(func() slog.Handler { return g.h.WithAttrs(as) })
}

func (g handler) WithGroup(name string) slog.Handler {
	return g.with(func() slog.Handler { return g.h.WithGroup(name) })
}

// with returns the handler f derives from g's, guarded; or g if f faults
// or returns nil.
func (g handler) with(f func() slog.Handler) slog.Handler {
	var h slog.Handler
	g.call(func() { h = f() })
	if h == nil {
		return g
	}
	g.h = h
	return g
}
