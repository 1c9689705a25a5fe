package sched

import (
	"math"
	"testing"
	"time"
)

// An epoch set after 2070 (its unix seconds positive) saturates the first
// instant time.Time holds to math.MinInt64, the start of time. (From mutation testing: a
// BUG. u − e.sec wraps around to a large positive number, and the case
// "ds > epochMaxSec" comes before the wrap-below check, so it converts to
// math.MaxInt64, the end of time; the wrap-below check is dead code.)
func TestEpochSaturatesTheFirstInstantToTheStart(t *testing.T) {
	t.Parallel()
	first := time.Unix(math.MinInt64, 0)
	if first.Unix() != math.MinInt64 {
		t.Fatalf("time.Time's first second: %d", first.Unix())
	}
	var e epoch
	e.ns(time.Date(2900, 1, 1, 0, 0, 0, 0, time.UTC))
	if n := e.ns(first); n != math.MinInt64 {
		t.Errorf("an epoch of the year 2900 converts the first instant to %d, want MinInt64", n)
	}
	if e.ns(first) > e.ns(time.Date(2900, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("the first instant converts to after the year 2900")
	}
}
