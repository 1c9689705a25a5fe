package cron

import (
	"testing"
	"time"
	_ "time/tzdata"

	"pgregory.net/rapid"
)

// scanChange finds the same boundaries as ZoneBounds where ZoneBounds is
// right.
func TestScanChangeMatchesZoneBounds(t *testing.T) {
	t.Parallel()
	zones := []string{"America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "Pacific/Apia", "America/Santiago"}
	rapid.Check(t, func(t *rapid.T) {
		loc, err := time.LoadLocation(rapid.SampledFrom(zones).Draw(t, "zone"))
		if err != nil {
			t.Fatal(err)
		}
		at := time.Unix(rapid.Int64Range(1.1e9, 2.1e9).Draw(t, "at"), 0).In(loc)
		if rapid.Bool().Draw(t, "nearEnd") {
			if _, end := at.ZoneBounds(); !end.IsZero() {
				at = end.Add(-time.Duration(rapid.Int64Range(1, 47*3600).Draw(t, "before")) * time.Second)
			}
		}
		// ZoneBounds also reports boundaries where only the
		// abbreviation or the DST flag changes (or none does, at
		// 2038-01-19 in some zones); scanChange finds offset changes.
		_, off := at.Zone()
		changes := func(b time.Time) bool { _, o := b.Zone(); return !b.IsZero() && o != off }
		start, end := at.ZoneBounds()
		if got := scanChange(at, 1); changes(end) && end.Sub(at) <= 47*time.Hour && !got.Equal(end) {
			t.Fatalf("scanChange(%v, 1) = %v, ZoneBounds end %v", at, got, end)
		} else if end.Sub(at) > 49*time.Hour && !got.Equal(at.Add(48*time.Hour)) {
			t.Fatalf("scanChange(%v, 1) = %v with no change in two days", at, got)
		}
		if got := scanChange(at, -1); !start.IsZero() && changes(start.Add(-time.Second)) && at.Sub(start) <= 47*time.Hour && !got.Equal(start) {
			t.Fatalf("scanChange(%v, -1) = %v, ZoneBounds start %v", at, got, start)
		}
	})
}

// Go's ZoneBounds returns an end before the instant on the last UTC day of a
// leap year served by a zone's TZ footer rule (golang/go#81583); zoneBounds
// repairs it.
func TestZoneBoundsRepairsGoIssue81583(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []time.Time{
		time.Date(2040, 12, 31, 0, 0, 0, 0, time.UTC).In(ny),
		time.Date(2040, 12, 31, 12, 0, 0, 0, time.UTC).In(ny),
		time.Date(2040, 12, 31, 23, 59, 59, 0, time.UTC).In(ny),
		time.Date(2096, 12, 31, 6, 0, 0, 0, time.UTC).In(ny),
	} {
		start, end := zoneBounds(at)
		if start.After(at) || !end.After(at) {
			t.Errorf("zoneBounds(%v) = %v, %v: not around it", at, start, end)
		}
	}
}
