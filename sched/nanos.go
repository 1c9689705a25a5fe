package sched

import (
	"math"
	"time"

	"github.com/jobkit/jobkit/internal/sat"
)

// The scheduler and Memory keep instants as int64 nanoseconds, which cost
// less than time.Time, counted from an epoch of their own (see epoch)
// rather than from 1970: unix nanoseconds end in 2262 and begin in 1678,
// and UnixNano wraps the instants past either end around. A user's At of
// the year 3000, an After or Snooze of math.MaxInt64, a retry delay
// saturated at it, a retention of centuries: each wrapped into the past,
// so that a job meant for far later ran at once (a snooze of
// math.MaxInt64 in a hot loop), a retained entry expired at once and a
// lease had lapsed; and a test's Clock that starts at the zero time.Time
// (the year 1) could not be told apart from 1678.

// epochLead is how long before the first instant an epoch sees it starts:
// instants from a century before that first one to about 192 years after
// it are exact, and those further off saturate.
const epochLead = 100 * 365 * 24 * time.Hour

// epoch converts instants to int64 nanoseconds since an instant a century
// before the first one it converts, and back: exact within about 292
// years, saturated beyond. Zero stands for "no instant" where a field
// needs one: only the epoch itself, a century before the first instant,
// converts to it. It uses wall-clock readings only, as UnixNano did, so
// that instants from a Clock and a user's time.Date compare. Not safe for
// concurrent use until set: the caller's lock guards the first ns, or it
// is set before the epoch is shared.
type epoch struct {
	sec, nsec int64 // the epoch in unix seconds and nanoseconds
	set       bool
}

// epochMaxSec is the most whole seconds that ns converts without
// saturating.
const epochMaxSec = math.MaxInt64/int64(time.Second) - 1

// ns returns t in nanoseconds since the epoch, saturated. It costs about
// what UnixNano does (time.Time.Sub, which saturates too, costs four
// times as much, on the path of every job).
func (e *epoch) ns(t time.Time) int64 {
	if !e.set {
		b := t.Add(-epochLead)
		e.sec, e.nsec, e.set = b.Unix(), int64(b.Nanosecond()), true
	}
	u := t.Unix()
	ds := u - e.sec
	// The wraps first (instants near the ends of time.Time's own range):
	// a sum that wrapped looks like one in range of the other sign.
	switch {
	case e.sec < 0 && ds < u: // wrapped upwards
		return math.MaxInt64
	case e.sec > 0 && ds > u: // wrapped downwards
		return math.MinInt64
	case ds > epochMaxSec:
		return math.MaxInt64
	case ds < -epochMaxSec:
		return math.MinInt64
	}
	return ds*int64(time.Second) + int64(t.Nanosecond()) - e.nsec
}

// time returns the instant ns nanoseconds after the epoch.
func (e *epoch) time(ns int64) time.Time {
	return time.Unix(e.sec+ns/int64(time.Second), e.nsec+ns%int64(time.Second))
}

// timeOrZero is time, but the zero time.Time for 0 (no instant).
func (e *epoch) timeOrZero(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return e.time(ns)
}

// addNanos returns n + d, saturated to the int64 range.
func addNanos(n int64, d time.Duration) int64 { return sat.Add(n, int64(d)) }

// subNanos returns a − b as a Duration, saturated.
func subNanos(a, b int64) time.Duration { return time.Duration(sat.Sub(a, b)) }
