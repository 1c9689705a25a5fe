package sched

import (
	"math"
	"time"
)

// The scheduler and Memory keep instants as unix nanoseconds, which cost
// less than time.Time. A time.Time reaches further than an int64 of
// nanoseconds (years 1678 to 2262): a user's At of the year 3000, an
// After or Snooze of math.MaxInt64, a retry delay saturated at it, a
// retention of centuries. Plain UnixNano wraps those around into the past,
// so that a job meant for far later ran at once (and a snooze of
// math.MaxInt64 in a hot loop) and a retained entry expired at once.
// nanos and addNanos saturate instead.
var (
	maxNanos = time.Unix(0, math.MaxInt64)
	minNanos = time.Unix(0, math.MinInt64)
)

// nanos returns t in unix nanoseconds, saturated to the int64 range.
func nanos(t time.Time) int64 {
	switch {
	case t.After(maxNanos):
		return math.MaxInt64
	case t.Before(minNanos):
		return math.MinInt64
	}
	return t.UnixNano()
}

// addNanos returns n + d, saturated to the int64 range.
func addNanos(n int64, d time.Duration) int64 {
	s := n + int64(d)
	switch {
	case d > 0 && s < n:
		return math.MaxInt64
	case d < 0 && s > n:
		return math.MinInt64
	}
	return s
}
