package governor_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jobkit/jobkit/governor"
)

// A Governor not made by New (the zero value, or a literal) admits nothing
// and says why: Start used to start a sampling goroutine that crashed the
// process (a ticker of a zero Interval), and TryAcquire, Snapshot and Usage
// dereferenced the parts New makes.
func TestZeroGovernor(t *testing.T) {
	t.Parallel()
	var g governor.Governor
	if err := g.Start(context.Background()); !errors.Is(err, governor.ErrInvalidConfig) {
		t.Errorf("Start = %v, want an error wrapping ErrInvalidConfig", err)
	}
	if _, ok := g.TryAcquire("", governor.Weight{}); ok {
		t.Error("TryAcquire granted a permit")
	}
	if _, ok := g.TryAcquire("key", governor.Weight{}); ok {
		t.Error("TryAcquire with a key granted a permit")
	}
	if _, err := g.Acquire(context.Background(), "", governor.Weight{}); !errors.Is(err, governor.ErrInvalidConfig) {
		t.Errorf("Acquire = %v, want an error wrapping ErrInvalidConfig", err)
	}
	if s := g.Snapshot(); !s.Stale || !errors.Is(s.Err, governor.ErrInvalidConfig) || s.Admitting {
		t.Errorf("Snapshot = %+v, want stale, not admitting, with an error wrapping ErrInvalidConfig", s)
	}
	if u := g.Usage("key"); u != 0 {
		t.Errorf("Usage = %v, want 0", u)
	}
	if err := g.Stop(context.Background()); err != nil {
		t.Errorf("Stop = %v", err)
	}
}
