package errchain

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jobkit/jobkit/internal/testkit"
)

// chain returns a chain of n errors: n−1 wraps around a root.
func chain(n int) error {
	err := errors.New("root")
	for range n - 1 {
		err = fmt.Errorf("wrap: %w", err)
	}
	return err
}

func TestLong(t *testing.T) {
	half := chain(6)
	for _, c := range []struct {
		name string
		err  error
		n    int
		want bool
	}{
		{"nil", nil, 0, false},
		{"one error, n = 1", errors.New("x"), 1, false},
		{"one error, n = 0", errors.New("x"), 0, true},
		{"a chain of n", chain(10), 10, false},
		{"a chain of n + 1", chain(11), 10, true},
		{"a join counts itself and every branch", errors.Join(half, half), 13, false},
		{"a join past n", errors.Join(half, half), 12, true},
		{"a nil in a join", errors.Join(nil, chain(3)), 4, false},
		{"a cycle", &testkit.Cycle{}, Max, true},
		{"a cycle in a join's second branch", errors.Join(errors.New("fine"), &testkit.Cycle{}), Max, true},
		{"a cycle under a wrap", fmt.Errorf("w: %w", &testkit.Cycle{}), Max, true},
	} {
		if got := Long(c.err, c.n); got != c.want {
			t.Errorf("%s: Long(err, %d) = %v, want %v", c.name, c.n, got, c.want)
		}
	}
}

func TestIs(t *testing.T) {
	target := errors.New("target")
	wrapped := fmt.Errorf("w: %w", target)
	if !Is(wrapped, target) || Is(nil, target) || Is(errors.Join(target, &testkit.Cycle{}), target) {
		t.Error("Is: want true for a short chain holding target, false for nil and for a cycle")
	}
}
