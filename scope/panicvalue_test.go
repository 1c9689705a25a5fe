package scope_test

import (
	"context"
	"testing"

	"github.com/jobkit/jobkit/internal/testkit"
	"github.com/jobkit/jobkit/scope"
)

// Run turns a panic of f into a returned *PanicError "carrying the value and
// stack, promptly, never swallowed". Logging that error (err.Error(), or
// Exit.String() in a finalizer) must not panic again, whatever the value:
// an Error method that panics turns the recovered panic into a crash of the
// goroutine that merely logs it.
func TestPanicErrorOfAnUnprintableValueFormatsWithoutPanicking(t *testing.T) {
	var exitString func() string
	err := scope.Run(context.Background(), func(_ context.Context, s *scope.Scope) error {
		_ = s.Defer(func(e scope.Exit) error {
			exitString = e.String
			return nil
		})
		panic(testkit.Stubborn{})
	})
	if err == nil {
		t.Fatal("Run returned nil")
	}
	for name, format := range map[string]func() string{"PanicError.Error": err.Error, "Exit.String": exitString} {
		func() {
			defer func() {
				if v := recover(); v != nil {
					t.Errorf("%s panicked: %T", name, v)
				}
			}()
			_ = format()
		}()
	}
}
