package safelog

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"testing"

	"github.com/jobkit/jobkit/internal/isolate"
)

// faulty is a handler whose every method panics, calls runtime.Goexit or
// returns, as exit says.
type faulty struct{ exit string }

func (f faulty) do() {
	switch f.exit {
	case "panic":
		panic("handler")
	case "goexit":
		runtime.Goexit()
	}
}
func (f faulty) Enabled(context.Context, slog.Level) bool  { f.do(); return true }
func (f faulty) Handle(context.Context, slog.Record) error { f.do(); return nil }
func (f faulty) WithAttrs([]slog.Attr) slog.Handler        { f.do(); return f }
func (f faulty) WithGroup(string) slog.Handler             { f.do(); return f }

// A handler that panics or ends its goroutine loses its record: the
// caller goes on, Handle returns the fault, and derived loggers stay
// guarded. One that returns logs as it would unguarded.
func TestGuardLosesOnlyTheRecord(t *testing.T) {
	t.Parallel()
	fault := errors.New("fault")
	for _, exit := range []string{"panic", "goexit", "return"} {
		t.Run(exit, func(t *testing.T) {
			t.Parallel()
			l := Guard(slog.New(faulty{exit}), isolate.Call, fault)
			if Guard(l, isolate.Call, fault) != l {
				t.Error("a guarded logger was guarded again")
			}
			l.With("k", 1).WithGroup("g").Info("record") // returns
			err := l.Handler().Handle(context.Background(), slog.Record{})
			if want := exit != "return"; (err == fault) != want {
				t.Errorf("Handle = %v; want the fault: %v", err, want)
			}
			if _, ok := l.With("k", 1).Handler().(handler); !ok {
				t.Error("a derived logger is not guarded")
			}
		})
	}
}
