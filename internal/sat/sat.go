// Package sat is saturating int64 arithmetic: a result past the int64
// range is the end of the range it passed, instead of wrapping around to
// the other sign. Instants and durations at the ends of their ranges (a
// delay or an interval of math.MaxInt64 for "never", a retention for
// ever, a rate of 1e-300 a second) go through it in sched and governor.
// Each function is a comparison or two: cheap enough for a hot path.
package sat

import (
	"math"
	"math/bits"
)

// Add returns a + b, saturated.
func Add(a, b int64) int64 {
	s := a + b
	switch {
	case b > 0 && s < a:
		return math.MaxInt64
	case b < 0 && s > a:
		return math.MinInt64
	}
	return s
}

// Sub returns a − b, saturated.
func Sub(a, b int64) int64 {
	d := a - b
	switch {
	case b < 0 && d < a:
		return math.MaxInt64
	case b > 0 && d > a:
		return math.MinInt64
	}
	return d
}

// Mul returns a × b for a, b ≥ 0, saturated at math.MaxInt64.
func Mul(a, b int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(lo)
}

// FromFloat converts x, not NaN, to an int64, saturated: Go leaves the
// conversion of a float outside the int64 range undefined.
func FromFloat(x float64) int64 {
	switch {
	case x >= 1<<63:
		return math.MaxInt64
	case x < -1<<63:
		return math.MinInt64
	}
	return int64(x)
}
