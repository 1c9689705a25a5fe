package schedhttp

import (
	"context"
	"errors"
	"log/slog"

	"github.com/jobkit/jobkit/internal/isolate"
)

// guardedHandler is the handler of a Handler's logger: it calls
// Options.Logger's handler on a goroutine of its own and waits for it
// (isolate.Call), so that a handler that panics or ends its goroutine
// (runtime.Goexit) loses only its record, and the request is still
// answered. A write's record is logged once the write is done and before
// its answer: a fault there would leave the client with no answer for a
// write that happened. The goroutine is paid per record: on writes and
// failures, not on reads that succeed.
type guardedHandler struct{ h slog.Handler }

// errHandlerFault is what Handle returns when the handler panicked or
// ended its goroutine.
var errHandlerFault = errors.New("schedhttp: the logger's handler panicked or called runtime.Goexit")

// guardLogger returns l with its handler guarded.
func guardLogger(l *slog.Logger) *slog.Logger {
	if _, ok := l.Handler().(guardedHandler); ok {
		return l
	}
	return slog.New(guardedHandler{l.Handler()})
}

func (g guardedHandler) Enabled(ctx context.Context, l slog.Level) (ok bool) {
	isolate.Call(func() { ok = g.h.Enabled(ctx, l) })
	return ok
}

func (g guardedHandler) Handle(ctx context.Context, r slog.Record) error {
	err := errHandlerFault
	isolate.Call(func() { err = g.h.Handle(ctx, r) })
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
	isolate.Call(func() { h = f() })
	if h == nil {
		return g
	}
	return guardedHandler{h}
}
