package sched

import (
	"math"
	"testing"
	"time"
)

// An epoch converts instants within about 292 years of it exactly and in
// order, both ways, whatever the first instant it sees (the year 1, before
// 1970, now, far on), and saturates those further off.
func TestEpochConvertsExactlyAndSaturates(t *testing.T) {
	t.Parallel()
	year := 365 * 24 * time.Hour
	for _, first := range []time.Time{
		time.Time{}.Add(time.Hour),
		time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Now(),
		time.Date(2900, 6, 1, 12, 0, 0, 999_999_999, time.UTC),
	} {
		var e epoch
		e.ns(first)
		var last int64 = math.MinInt64
		for _, d := range []time.Duration{-99 * year, -time.Hour, -1, 0, 1, time.Second, 150 * year, 190 * year} {
			at := first.Add(d)
			n := e.ns(at)
			if n <= last {
				t.Errorf("first %v: %v converts to %d, not after the instant before it (%d)", first, at, n, last)
			}
			last = n
			if back := e.time(n); !back.Equal(at) {
				t.Errorf("first %v: %v converts to %d and back to %v", first, at, n, back)
			}
		}
		if n := e.ns(first.Add(-100 * year)); n != 0 {
			t.Errorf("first %v: the epoch converts to %d, want 0", first, n)
		}
		if n := e.ns(first.Add(200 * year)); n != math.MaxInt64 {
			t.Errorf("first %v: 200 years on converts to %d, want MaxInt64", first, n)
		}
		if n := e.ns(first.AddDate(-400, 0, 0)); n != math.MinInt64 {
			t.Errorf("first %v: 400 years before converts to %d, want MinInt64", first, n)
		}
		if n := e.ns(time.Unix(math.MaxInt64/2, 0)); n != math.MaxInt64 {
			t.Errorf("first %v: the year 146e9 converts to %d, want MaxInt64", first, n)
		}
	}
	if got := addNanos(math.MaxInt64-1, 2); got != math.MaxInt64 {
		t.Errorf("addNanos past the end: %d", got)
	}
	if got := subNanos(math.MaxInt64, -5); got != math.MaxInt64 {
		t.Errorf("subNanos past the end: %d", got)
	}
	if got := subNanos(math.MinInt64+1, 5); got != math.MinInt64 {
		t.Errorf("subNanos past the start: %d", got)
	}
	if got := subNanos(10, 3); got != 7 {
		t.Errorf("subNanos(10, 3) = %d", got)
	}
}
