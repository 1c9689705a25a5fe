package sched

import (
	"testing"
	"testing/synctest"
	"time"
)

// The system clock tells time.Now's time, wall and monotonic, across the
// renewals of its anchor.
func TestSystemClockTellsTheTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := new(systemClock)
		for i := range 8 {
			want := time.Now()
			got := c.Now()
			if !got.Equal(want) || got.UnixNano() != want.UnixNano() {
				t.Fatalf("read %d: Now() = %v, want %v", i, got, want)
			}
			time.Sleep(400 * time.Millisecond) // past the anchor's second every third read
		}
	})
}

// With the real clock, each reading lies between time.Now's before and
// after it, and the readings never go back.
func TestSystemClockIsMonotonic(t *testing.T) {
	t.Parallel()
	c := new(systemClock)
	var last time.Time
	for i := range 100_000 {
		before := time.Now()
		got := c.Now()
		after := time.Now()
		if got.Before(before) || got.After(after) || got.Before(last) {
			t.Fatalf("read %d: %v not between %v and %v, or before the last reading %v", i, got, before, after, last)
		}
		if w := got.Round(0); w.Before(before.Round(0).Add(-time.Millisecond)) || w.After(after.Round(0).Add(time.Millisecond)) {
			t.Fatalf("read %d: wall time %v more than 1ms from time.Now's %v–%v", i, w, before.Round(0), after.Round(0))
		}
		last = got
	}
}
