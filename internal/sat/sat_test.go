package sat

import (
	"math"
	"testing"
)

func TestSaturates(t *testing.T) {
	t.Parallel()
	const max, min = math.MaxInt64, math.MinInt64
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"Add in range", Add(3, -5), -2},
		{"Add past the top", Add(max-1, 2), max},
		{"Add past the bottom", Add(min+1, -2), min},
		{"Sub in range", Sub(10, 3), 7},
		{"Sub past the top", Sub(max, -5), max},
		{"Sub past the bottom", Sub(min+1, 5), min},
		{"Mul in range", Mul(1<<31, 1<<31), 1 << 62},
		{"Mul past the top", Mul(1<<32, 1<<31), max},
		{"Mul of the top", Mul(max, 2), max},
		{"FromFloat in range", FromFloat(-12.9), -12},
		{"FromFloat past the top", FromFloat(1e300), max},
		{"FromFloat at 2^63", FromFloat(1 << 63), max},
		{"FromFloat past the bottom", FromFloat(-1e300), min},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.name, c.got, c.want)
		}
	}
}
