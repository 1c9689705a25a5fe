package cron

import (
	"fmt"
	"math"
	"time"
)

// IntervalSchedule runs at a fixed rate from an anchor: its activations are
// anchor + k·d for k = 0, 1, 2, …, in real (elapsed) time, so offset changes
// of the zone do not move them. It is what [Every] and an @every spec build.
// It is immutable and safe for concurrent use; the zero value is not usable.
type IntervalSchedule struct {
	every  time.Duration
	anchor time.Time
	phase  time.Duration // anchor - anchor.Truncate(every), in [0, every)
	loc    *time.Location
}

// Every returns the schedule that fires at anchor and every d after it. The
// engine passes the time a job was registered, or its last scheduled run, as
// the anchor. The schedule's times are in anchor's location.
//
// d must be at least one second; otherwise Every returns an error wrapping
// [ErrInvalidInterval]. d is kept exactly (1500ms stays 1.5s).
func Every(d time.Duration, anchor time.Time) (*IntervalSchedule, error) {
	return newEvery(d, anchor, anchor.Location())
}

func newEvery(d time.Duration, anchor time.Time, loc *time.Location) (*IntervalSchedule, error) {
	if d < time.Second {
		return nil, fmt.Errorf("%w: %v is below one second", ErrInvalidInterval, d)
	}
	anchor = anchor.Round(0)
	return &IntervalSchedule{
		every:  d,
		anchor: anchor,
		phase:  anchor.Sub(anchor.Truncate(d)),
		loc:    loc,
	}, nil
}

// Next returns the first activation strictly after t: the anchor if t is
// before it, otherwise anchor + k·d for the smallest such k. It runs in
// constant time however far t is from the anchor.
func (s *IntervalSchedule) Next(t time.Time) time.Time {
	t = t.Round(0)
	if t.Before(s.anchor) {
		return s.anchor.In(s.loc)
	}
	var delta time.Duration
	if since := t.Sub(s.anchor); since < math.MaxInt64 {
		delta = s.every - since%s.every
	} else {
		// More than 292 years: compare t and the activations by their
		// phase within d, measured from the zero time
		// (time.Time.Truncate), with no Duration spanning t - anchor.
		delta = s.phase - t.Sub(t.Truncate(s.every))
		if delta <= 0 {
			delta += s.every
		}
	}
	return t.Add(delta).In(s.loc)
}

// Interval returns d.
func (s *IntervalSchedule) Interval() time.Duration { return s.every }

// Anchor returns the anchor, without a monotonic clock reading.
func (s *IntervalSchedule) Anchor() time.Time { return s.anchor }

// String returns the schedule as an @every spec, without the anchor.
func (s *IntervalSchedule) String() string { return "@every " + s.every.String() }
