package panicval

import (
	"errors"
	"fmt"
	"testing"
)

// stubborn's String panics with a stubborn: fmt recovers the first panic of
// a String method but panics again on this nested one.
type stubborn struct{}

func (stubborn) String() string { panic(stubborn{}) }

// once's String panics with a plain value, which fmt prints in its place.
type once struct{}

func (once) String() string { panic("bad String") }

func TestString(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{42, "42"},
		{errors.New("boom"), "boom"},
		{nil, "<nil>"},
		{once{}, fmt.Sprint(once{})},
		{stubborn{}, "(a panicval.stubborn whose formatting panicked)"},
	} {
		if got := String(tc.v); got != tc.want {
			t.Errorf("String(%T) = %q, want %q", tc.v, got, tc.want)
		}
	}
	// fmt itself panics on stubborn: the case String exists for.
	func() {
		defer func() {
			if recover() == nil {
				t.Error("fmt.Sprint(stubborn{}) did not panic: the test's value no longer shows the case")
			}
		}()
		_ = fmt.Sprint(stubborn{})
	}()
}
