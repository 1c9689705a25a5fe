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
// after it, and the readings never go back. Its wall time is within 1ms of
// time.Now's, give or take what the machine's wall clock stepped against
// the monotonic one since the test began: the clock takes its wall time
// from an anchor up to a second old, so a step shows within a second (see
// systemClock), and a virtual machine's wall clock may be stepped at any
// time (a restore from a snapshot, a time sync).
func TestSystemClockIsMonotonic(t *testing.T) {
	t.Parallel()
	c := new(systemClock)
	ref := time.Now()
	// skew is how far t's wall time moved against its monotonic time since
	// ref; maxSkew the largest |skew| seen.
	skew := func(t time.Time) time.Duration { return t.Round(0).Sub(ref.Round(0)) - t.Sub(ref) }
	var last time.Time
	var maxSkew time.Duration
	for i := range 100_000 {
		before := time.Now()
		got := c.Now()
		after := time.Now()
		if got.Before(before) || got.After(after) || got.Before(last) {
			t.Fatalf("read %d: %v not between %v and %v, or before the last reading %v", i, got, before, after, last)
		}
		for _, x := range []time.Time{before, after} {
			maxSkew = max(maxSkew, skew(x), -skew(x))
		}
		// The anchor was read in this test, so its skew and now's differ
		// by at most 2 × maxSkew.
		slack := time.Millisecond + 2*maxSkew
		if w := got.Round(0); w.Before(before.Round(0).Add(-slack)) || w.After(after.Round(0).Add(slack)) {
			t.Fatalf("read %d: wall time %v more than %v from time.Now's %v–%v", i, w, slack, before.Round(0), after.Round(0))
		}
		last = got
	}
}
