package governor_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jobkit/jobkit/governor"
)

// A nil context given to Start, Acquire or Stop is an error wrapping
// ErrInvalidConfig, and Stop then changes nothing. Before, each
// dereferenced it.
func TestANilContextIsAnError(t *testing.T) {
	t.Parallel()
	g, err := governor.New(governor.Config{Sampler: governor.SamplerFunc(func(context.Context) (governor.Reading, error) {
		return governor.Reading{CPUCores: 1}, nil
	})})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Stop(context.Background())
	call := func(name string, f func() error) {
		t.Helper()
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("%s(nil ctx) panicked: %v", name, r)
			}
		}()
		if err := f(); !errors.Is(err, governor.ErrInvalidConfig) {
			t.Errorf("%s(nil ctx) = %v, want ErrInvalidConfig", name, err)
		}
	}
	//lint:ignore SA1012 the point of the test
	call("Start", func() error { return g.Start(nil) })
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1012 the point of the test
	call("Acquire", func() error { p, err := g.Acquire(nil, "", governor.Weight{}); p.Release(); return err })
	//lint:ignore SA1012 the point of the test
	call("Stop", func() error { return g.Stop(nil) })
	p, ok := g.TryAcquire("", governor.Weight{})
	if !ok {
		t.Error("the Governor stopped on a Stop with a nil context")
	}
	p.Release()
}
