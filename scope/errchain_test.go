package scope_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jobkit/jobkit/internal/testkit"
	"github.com/jobkit/jobkit/scope"
)

// An error that wraps itself, or more than a thousand errors, is a
// failure: its chain is not searched for a panic or the context's error.
// Before, ExitOf (and so Run and Call, and distinct's Process and Work,
// which classify f's error with it) walked the cycle for ever with
// errors.As, burning a core; the scope never closed.
func TestAnErrorThatWrapsItselfIsAFailure(t *testing.T) {
	t.Parallel()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	long := error(context.Canceled)
	for range 5000 {
		long = fmt.Errorf("wrap: %w", long)
	}
	for name, bad := range map[string]error{
		"cycle":                       &testkit.Cycle{},
		"cycle in a join":             errors.Join(context.Canceled, &testkit.Cycle{}),
		"a chain of 5,000 (canceled)": long,
	} {
		for _, ctx := range []context.Context{context.Background(), cancelled} {
			t.Run(fmt.Sprintf("%s/ctx done %v", name, ctx.Err() != nil), func(t *testing.T) {
				t.Parallel()
				check := func(how string, e scope.Exit) {
					t.Helper()
					if e.Kind() != scope.KindFailure || e.Err() != bad {
						t.Errorf("%s: exit %v with error %T, want a failure with the error itself", how, e.Kind(), e.Err())
					}
				}
				testkit.Within(t, "ExitOf", func() { check("ExitOf", scope.ExitOf(ctx, bad)) })
				testkit.Within(t, "Call", func() {
					e, err := scope.Call(ctx, func(context.Context) error { return bad })
					check("Call", e)
					if err != bad {
						t.Errorf("Call returned %T, want the error", err)
					}
				})
				testkit.Within(t, "Run", func() {
					var saw scope.Exit
					err := scope.Run(ctx, func(_ context.Context, s *scope.Scope) error {
						s.Defer(func(e scope.Exit) error { saw = e; return nil })
						return bad
					})
					check("Run's finalizer", saw)
					if err != bad {
						t.Errorf("Run returned %T, want the error", err)
					}
				})
			})
		}
	}
}

// panicky is an error whose Unwrap panics.
type panicky struct{}

func (panicky) Error() string { return "panicky" }
func (panicky) Unwrap() error { panic("Unwrap panicked") }

// An error whose Unwrap panics, returned by f, is a panic of Run and Call:
// the panic does not propagate, and the scope closes.
func TestAnErrorWhoseUnwrapPanicsIsAPanic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var p *scope.PanicError
	e, err := scope.Call(ctx, func(context.Context) error { return panicky{} })
	if e.Kind() != scope.KindPanic || !errors.As(err, &p) || p.Value != "Unwrap panicked" {
		t.Errorf("Call: exit %v, error %v; want the panic of Unwrap", e.Kind(), err)
	}
	var saw scope.Exit
	err = scope.Run(ctx, func(_ context.Context, s *scope.Scope) error {
		s.Defer(func(e scope.Exit) error { saw = e; return nil })
		return panicky{}
	})
	if saw.Kind() != scope.KindPanic || !errors.As(err, &p) || p.Value != "Unwrap panicked" {
		t.Errorf("Run: finalizer saw %v, error %v; want the panic of Unwrap", saw.Kind(), err)
	}
}
