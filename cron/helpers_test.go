package cron_test

import (
	"time"

	// The zone database is embedded so that the tests do not depend on
	// the machine's /usr/share/zoneinfo.
	_ "time/tzdata"

	"github.com/jobkit/jobkit/cron"
)

// layout is RFC 3339 with the zone abbreviation, the form the tables use.
const layout = "2006-01-02T15:04:05Z07:00 MST"

// fataler is what the helpers need of *testing.T, *testing.B and *rapid.T.
type fataler interface {
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

func mustLoad(tb fataler, name string) *time.Location {
	if h, ok := tb.(interface{ Helper() }); ok {
		h.Helper()
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		tb.Fatalf("LoadLocation(%q): %v", name, err)
	}
	return loc
}

func mustTime(tb fataler, s string) time.Time {
	if h, ok := tb.(interface{ Helper() }); ok {
		h.Helper()
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		tb.Fatalf("time.Parse(%q): %v", s, err)
	}
	return t
}

func mustParse(tb fataler, spec string, opts ...cron.Option) cron.Schedule {
	if h, ok := tb.(interface{ Helper() }); ok {
		h.Helper()
	}
	s, err := cron.Parse(spec, opts...)
	if err != nil {
		tb.Fatalf("Parse(%q): %v", spec, err)
	}
	return s
}

// nexts returns the first n activations of s after from, formatted.
func nexts(s cron.Schedule, from time.Time, n int) []string {
	var out []string
	for t := from; len(out) < n; {
		t = s.Next(t)
		if t.IsZero() {
			out = append(out, "zero")
			break
		}
		out = append(out, t.Format(layout))
	}
	return out
}

// countDay returns the number of activations of s during the local calendar
// day that starts at midnight of date in loc.
func countDay(s cron.Schedule, loc *time.Location, y int, m time.Month, d int) int {
	start := time.Date(y, m, d, 0, 0, 0, 0, loc)
	end := time.Date(y, m, d+1, 0, 0, 0, 0, loc)
	n := 0
	for t := s.Next(start.Add(-1)); !t.IsZero() && t.Before(end); t = s.Next(t) {
		n++
	}
	return n
}
