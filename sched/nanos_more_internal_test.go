package sched

import (
	"math"
	"testing"
	"time"
)

// unixToInternal is the seconds from the year 1 to 1970: time.Time holds
// unix seconds from math.MinInt64 to math.MaxInt64 − unixToInternal.
const unixToInternal = 62135596800

// An epoch set in the year 1 saturates the last instant time.Time holds,
// whose distance from it in seconds does not fit an int64 (u − e.sec wraps
// around to a negative number). (From mutation testing: kills dropping the wrap-above
// check of epoch.ns, which TestEpochConvertsExactlyAndSaturates does not
// reach.)
func TestEpochSaturatesTheLastInstant(t *testing.T) {
	t.Parallel()
	last := time.Unix(math.MaxInt64-unixToInternal, 999_999_999)
	if last.Unix() != math.MaxInt64-unixToInternal {
		t.Fatalf("time.Time's last second: %d", last.Unix())
	}
	var e epoch
	e.ns(time.Time{}.Add(time.Hour))
	if n := e.ns(last); n != math.MaxInt64 {
		t.Errorf("an epoch of the year 1 converts the last instant to %d, want MaxInt64", n)
	}
}
