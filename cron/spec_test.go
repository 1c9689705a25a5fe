package cron_test

import (
	"slices"
	"testing"
	"time"

	"github.com/jobkit/jobkit/cron"
)

// The daylight-saving transitions in the tables (all in 2026 unless noted):
//
//	America/New_York    Mar  8 02:00 EST -> 03:00 EDT;  Nov  1 02:00 EDT -> 01:00 EST
//	Europe/Berlin       Mar 29 02:00 CET -> 03:00 CEST; Oct 25 03:00 CEST -> 02:00 CET
//	Australia/Lord_Howe Oct  4 02:00 +1030 -> 02:30 +11; Apr  5 02:00 +11 -> 01:30 +1030
//	America/Sao_Paulo   2018-11-04 00:00 -03 -> 01:00 -02 (midnight does not exist)
//	Pacific/Apia        2011-12-29 24:00 -10 -> 2011-12-31 00:00 +14 (a skipped day)
//	Asia/Kolkata, UTC   none

type nextCase struct {
	zone, spec, from string
	want             []string
}

func runNextCases(t *testing.T, cases []nextCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.zone+"/"+c.spec+"/"+c.from, func(t *testing.T) {
			t.Parallel()
			s := mustParse(t, c.spec, cron.WithLocation(mustLoad(t, c.zone)))
			if got := nexts(s, mustTime(t, c.from), len(c.want)); !slices.Equal(got, c.want) {
				t.Errorf("Next from %s:\n got %q\nwant %q", c.from, got, c.want)
			}
		})
	}
}

func TestNextSyntax(t *testing.T) {
	t.Parallel()
	runNextCases(t, []nextCase{
		{"UTC", "*/15 * * * *", "2026-01-01T00:07:00Z", []string{
			"2026-01-01T00:15:00Z UTC", "2026-01-01T00:30:00Z UTC", "2026-01-01T00:45:00Z UTC", "2026-01-01T01:00:00Z UTC"}},
		{"UTC", "*/20 * * * * *", "2026-01-01T00:00:00Z", []string{
			"2026-01-01T00:00:20Z UTC", "2026-01-01T00:00:40Z UTC", "2026-01-01T00:01:00Z UTC"}},
		{"UTC", "0 30 9 * * mon-fri", "2026-01-02T10:00:00Z", []string{ // a Friday
			"2026-01-05T09:30:00Z UTC", "2026-01-06T09:30:00Z UTC"}},
		// Strictly after, whole seconds, even from a time with a fraction.
		{"UTC", "* * * * * *", "2026-01-01T00:00:00Z", []string{"2026-01-01T00:00:01Z UTC", "2026-01-01T00:00:02Z UTC"}},
		{"UTC", "* * * * * *", "2026-01-01T00:00:00.5Z", []string{"2026-01-01T00:00:01Z UTC"}},
		{"UTC", "* * * * * *", "2025-12-31T23:59:59.999999999Z", []string{"2026-01-01T00:00:00Z UTC"}},
		// Descriptors.
		{"UTC", "@hourly", "2026-01-01T00:00:00Z", []string{"2026-01-01T01:00:00Z UTC", "2026-01-01T02:00:00Z UTC"}},
		{"UTC", "@daily", "2026-01-01T00:00:00Z", []string{"2026-01-02T00:00:00Z UTC", "2026-01-03T00:00:00Z UTC"}},
		{"UTC", "@midnight", "2026-01-01T00:00:00Z", []string{"2026-01-02T00:00:00Z UTC"}},
		{"UTC", "@weekly", "2026-01-01T00:00:00Z", []string{"2026-01-04T00:00:00Z UTC", "2026-01-11T00:00:00Z UTC"}},
		{"UTC", "@monthly", "2026-01-01T00:00:00Z", []string{"2026-02-01T00:00:00Z UTC", "2026-03-01T00:00:00Z UTC"}},
		{"UTC", "@yearly", "2026-01-01T00:00:00Z", []string{"2027-01-01T00:00:00Z UTC", "2028-01-01T00:00:00Z UTC"}},
		{"UTC", "@annually", "2026-06-01T00:00:00Z", []string{"2027-01-01T00:00:00Z UTC"}},
		// The rarest spec that can fire: 2100 is not a leap year.
		{"UTC", "0 0 29 2 *", "2096-03-01T00:00:00Z", []string{"2104-02-29T00:00:00Z UTC", "2108-02-29T00:00:00Z UTC"}},
		{"UTC", "0 0 31 * *", "2026-04-01T00:00:00Z", []string{"2026-05-31T00:00:00Z UTC", "2026-07-31T00:00:00Z UTC"}},
		// Both day fields restricted: either matches (robfig's rule).
		{"UTC", "0 12 13 * fri", "2026-01-01T00:00:00Z", []string{
			"2026-01-02T12:00:00Z UTC", "2026-01-09T12:00:00Z UTC", "2026-01-13T12:00:00Z UTC", "2026-01-16T12:00:00Z UTC"}},
		// A day field written * : both must match.
		{"UTC", "0 12 * feb mon", "2026-01-01T00:00:00Z", []string{"2026-02-02T12:00:00Z UTC", "2026-02-09T12:00:00Z UTC"}},
		{"UTC", "0 12 ? 2 MON", "2026-01-01T00:00:00Z", []string{"2026-02-02T12:00:00Z UTC"}},
		// Surrounding space is ignored.
		{"UTC", "  @hourly\t", "2026-01-01T00:30:00Z", []string{"2026-01-01T01:00:00Z UTC"}},
		// A zone prefix overrides WithLocation (UTC here).
		{"UTC", "CRON_TZ=Asia/Kolkata 0 9 * * *", "2026-01-01T00:00:00Z", []string{"2026-01-01T09:00:00+05:30 IST"}},
		{"UTC", "TZ=America/New_York @daily", "2026-01-01T00:00:00Z", []string{"2026-01-01T00:00:00-05:00 EST"}},
		// Asia/Kolkata: no daylight saving, a half-hour offset.
		{"Asia/Kolkata", "0 9 * * *", "2026-01-01T00:00:00+05:30", []string{
			"2026-01-01T09:00:00+05:30 IST", "2026-01-02T09:00:00+05:30 IST"}},
		{"Asia/Kolkata", "@hourly", "2026-01-01T00:10:00+05:30", []string{
			"2026-01-01T01:00:00+05:30 IST", "2026-01-01T02:00:00+05:30 IST"}},
		// @every with the default anchor is aligned to the zero time (UTC).
		{"Asia/Kolkata", "@every 1h", "2026-01-01T00:10:00+05:30", []string{
			"2026-01-01T00:30:00+05:30 IST", "2026-01-01T01:30:00+05:30 IST"}},
	})
}

// Specs with fixed hours: a wall time in a spring-forward gap runs once at
// the end of the gap; a wall time that occurs twice runs at its first
// occurrence only.
func TestNextDSTFixedHours(t *testing.T) {
	t.Parallel()
	runNextCases(t, []nextCase{
		// America/New_York, spring forward.
		{"America/New_York", "30 2 * * *", "2026-03-07T12:00:00-05:00", []string{
			"2026-03-08T03:00:00-04:00 EDT", "2026-03-09T02:30:00-04:00 EDT"}},
		{"America/New_York", "0 2 * * *", "2026-03-07T12:00:00-05:00", []string{
			"2026-03-08T03:00:00-04:00 EDT", "2026-03-09T02:00:00-04:00 EDT"}},
		{"America/New_York", "30 2 * * *", "2026-03-08T01:59:59.9-05:00", []string{"2026-03-08T03:00:00-04:00 EDT"}},
		{"America/New_York", "30 2 * * *", "2026-03-08T03:00:00-04:00", []string{"2026-03-09T02:30:00-04:00 EDT"}},
		// Every wall time of the gap maps to 03:00: one run.
		{"America/New_York", "*/15 2 * * *", "2026-03-08T00:00:00-05:00", []string{
			"2026-03-08T03:00:00-04:00 EDT", "2026-03-09T02:00:00-04:00 EDT"}},
		{"America/New_York", "0 2,3 * * *", "2026-03-08T00:00:00-05:00", []string{
			"2026-03-08T03:00:00-04:00 EDT", "2026-03-09T02:00:00-04:00 EDT"}},
		// A step that skips hours is a fixed-hour spec.
		{"America/New_York", "0 */2 * * *", "2026-03-07T23:30:00-05:00", []string{
			"2026-03-08T00:00:00-05:00 EST", "2026-03-08T03:00:00-04:00 EDT", "2026-03-08T04:00:00-04:00 EDT", "2026-03-08T06:00:00-04:00 EDT"}},
		// America/New_York, fall back.
		{"America/New_York", "30 1 * * *", "2026-10-31T12:00:00-04:00", []string{
			"2026-11-01T01:30:00-04:00 EDT", "2026-11-02T01:30:00-05:00 EST"}},
		{"America/New_York", "30 1 * * *", "2026-11-01T01:30:00-04:00", []string{"2026-11-02T01:30:00-05:00 EST"}},
		{"America/New_York", "30 1 * * *", "2026-11-01T01:00:00-05:00", []string{"2026-11-02T01:30:00-05:00 EST"}},
		{"America/New_York", "30 2 * * *", "2026-10-31T12:00:00-04:00", []string{
			"2026-11-01T02:30:00-05:00 EST", "2026-11-02T02:30:00-05:00 EST"}},
		{"America/New_York", "0 1,2 * * *", "2026-10-31T12:00:00-04:00", []string{
			"2026-11-01T01:00:00-04:00 EDT", "2026-11-01T02:00:00-05:00 EST", "2026-11-02T01:00:00-05:00 EST"}},
		{"America/New_York", "59 1 * * *", "2026-11-01T01:59:30-04:00", []string{"2026-11-02T01:59:00-05:00 EST"}},
		// Europe/Berlin.
		{"Europe/Berlin", "30 2 * * *", "2026-03-28T12:00:00+01:00", []string{
			"2026-03-29T03:00:00+02:00 CEST", "2026-03-30T02:30:00+02:00 CEST"}},
		{"Europe/Berlin", "30 2 * * *", "2026-10-24T12:00:00+02:00", []string{
			"2026-10-25T02:30:00+02:00 CEST", "2026-10-26T02:30:00+01:00 CET"}},
		{"Europe/Berlin", "0 3 * * *", "2026-10-24T12:00:00+02:00", []string{
			"2026-10-25T03:00:00+01:00 CET", "2026-10-26T03:00:00+01:00 CET"}},
		// Australia/Lord_Howe: a 30-minute shift.
		{"Australia/Lord_Howe", "15 2 * * *", "2026-10-03T12:00:00+10:30", []string{
			"2026-10-04T02:30:00+11:00 +11", "2026-10-05T02:15:00+11:00 +11"}},
		{"Australia/Lord_Howe", "30 1 * * *", "2026-04-04T12:00:00+11:00", []string{
			"2026-04-05T01:30:00+11:00 +11", "2026-04-06T01:30:00+10:30 +1030"}},
		{"Australia/Lord_Howe", "45 1 * * *", "2026-04-05T01:45:00+11:00", []string{"2026-04-06T01:45:00+10:30 +1030"}},
		// America/Sao_Paulo: midnight did not exist; @daily runs at 01:00.
		{"America/Sao_Paulo", "@daily", "2018-11-03T12:00:00-03:00", []string{
			"2018-11-04T01:00:00-02:00 -02", "2018-11-05T00:00:00-02:00 -02"}},
		// Pacific/Apia skipped 2011-12-30: its noon runs when the day
		// would have been, at the first instant of the 31st.
		{"Pacific/Apia", "0 12 * * *", "2011-12-29T12:00:00-10:00", []string{
			"2011-12-31T00:00:00+14:00 +14", "2011-12-31T12:00:00+14:00 +14"}},
	})
}

// Specs whose hour field covers every hour follow real time: every instant
// whose wall time matches, so a gap's wall times do not run and a repeated
// hour runs twice.
func TestNextDSTEveryHour(t *testing.T) {
	t.Parallel()
	runNextCases(t, []nextCase{
		{"America/New_York", "0 * * * *", "2026-03-08T00:30:00-05:00", []string{
			"2026-03-08T01:00:00-05:00 EST", "2026-03-08T03:00:00-04:00 EDT", "2026-03-08T04:00:00-04:00 EDT"}},
		{"America/New_York", "0 * * * *", "2026-11-01T00:30:00-04:00", []string{
			"2026-11-01T01:00:00-04:00 EDT", "2026-11-01T01:00:00-05:00 EST", "2026-11-01T02:00:00-05:00 EST"}},
		{"America/New_York", "@hourly", "2026-11-01T00:30:00-04:00", []string{
			"2026-11-01T01:00:00-04:00 EDT", "2026-11-01T01:00:00-05:00 EST", "2026-11-01T02:00:00-05:00 EST"}},
		{"America/New_York", "0 0-23 * * *", "2026-11-01T00:30:00-04:00", []string{
			"2026-11-01T01:00:00-04:00 EDT", "2026-11-01T01:00:00-05:00 EST"}},
		{"America/New_York", "30 */1 * * *", "2026-03-08T01:00:00-05:00", []string{
			"2026-03-08T01:30:00-05:00 EST", "2026-03-08T03:30:00-04:00 EDT"}},
		{"America/New_York", "*/15 * * * *", "2026-03-08T01:40:00-05:00", []string{
			"2026-03-08T01:45:00-05:00 EST", "2026-03-08T03:00:00-04:00 EDT", "2026-03-08T03:15:00-04:00 EDT"}},
		{"America/New_York", "*/15 * * * *", "2026-11-01T01:40:00-04:00", []string{
			"2026-11-01T01:45:00-04:00 EDT", "2026-11-01T01:00:00-05:00 EST", "2026-11-01T01:15:00-05:00 EST"}},
		{"Europe/Berlin", "0 * * * *", "2026-03-29T00:30:00+01:00", []string{
			"2026-03-29T01:00:00+01:00 CET", "2026-03-29T03:00:00+02:00 CEST"}},
		{"Europe/Berlin", "0 * * * *", "2026-10-25T00:30:00+02:00", []string{
			"2026-10-25T01:00:00+02:00 CEST", "2026-10-25T02:00:00+02:00 CEST", "2026-10-25T02:00:00+01:00 CET", "2026-10-25T03:00:00+01:00 CET"}},
		{"Australia/Lord_Howe", "*/30 * * * *", "2026-04-05T00:30:00+11:00", []string{
			"2026-04-05T01:00:00+11:00 +11", "2026-04-05T01:30:00+11:00 +11", "2026-04-05T01:30:00+10:30 +1030", "2026-04-05T02:00:00+10:30 +1030"}},
		// 02:00 does not exist; 02:30 is the first instant after the gap.
		{"Australia/Lord_Howe", "0 * * * *", "2026-10-04T00:30:00+10:30", []string{
			"2026-10-04T01:00:00+10:30 +1030", "2026-10-04T03:00:00+11:00 +11"}},
		{"Australia/Lord_Howe", "*/30 * * * *", "2026-10-04T01:10:00+10:30", []string{
			"2026-10-04T01:30:00+10:30 +1030", "2026-10-04T02:30:00+11:00 +11", "2026-10-04T03:00:00+11:00 +11"}},
		{"Pacific/Apia", "0 * * * *", "2011-12-29T22:30:00-10:00", []string{
			"2011-12-29T23:00:00-10:00 -10", "2011-12-31T00:00:00+14:00 +14", "2011-12-31T01:00:00+14:00 +14"}},
	})
}

// Whole simulated days: how many times a spec runs on the transition days.
func TestNextSimulatedDays(t *testing.T) {
	t.Parallel()
	type day struct {
		y int
		m time.Month
		d int
	}
	cases := []struct {
		zone string
		day  day
		want map[string]int
	}{
		{"America/New_York", day{2026, 3, 8}, map[string]int{
			"0 * * * *": 23, "@hourly": 23, "*/15 * * * *": 92, "30 2 * * *": 1, "30 1 * * *": 1, "0 2 * * *": 1,
			"* 2 * * *": 1, "*/15 2 * * *": 1, "@daily": 1, "0 */2 * * *": 12, "@every 1h": 23, "@every 15m": 92}},
		{"America/New_York", day{2026, 11, 1}, map[string]int{
			"0 * * * *": 25, "@hourly": 25, "*/15 * * * *": 100, "30 1 * * *": 1, "30 2 * * *": 1, "0 2 * * *": 1,
			"* 1 * * *": 60, "0 1,2 * * *": 2, "@daily": 1, "@every 1h": 25}},
		{"America/New_York", day{2026, 6, 1}, map[string]int{"0 * * * *": 24, "*/15 * * * *": 96, "30 2 * * *": 1}},
		{"Europe/Berlin", day{2026, 3, 29}, map[string]int{"0 * * * *": 23, "30 2 * * *": 1, "0 2 * * *": 1, "*/10 * * * * *": 23 * 360}},
		{"Europe/Berlin", day{2026, 10, 25}, map[string]int{"0 * * * *": 25, "30 2 * * *": 1, "* 2 * * *": 60}},
		{"Australia/Lord_Howe", day{2026, 10, 4}, map[string]int{"0 * * * *": 23, "*/30 * * * *": 47, "*/15 * * * *": 94, "15 2 * * *": 1}},
		{"Australia/Lord_Howe", day{2026, 4, 5}, map[string]int{"0 * * * *": 24, "*/30 * * * *": 49, "*/15 * * * *": 98, "45 1 * * *": 1}},
		{"Asia/Kolkata", day{2026, 3, 8}, map[string]int{"0 * * * *": 24, "*/15 * * * *": 96, "@every 1h": 24}},
		{"UTC", day{2026, 3, 8}, map[string]int{"* * * * * *": 86400, "0 * * * *": 24, "@every 1h": 24}},
	}
	for _, c := range cases {
		for spec, want := range c.want {
			t.Run(c.zone+"/"+spec, func(t *testing.T) {
				t.Parallel()
				loc := mustLoad(t, c.zone)
				s := mustParse(t, spec, cron.WithLocation(loc))
				if got := countDay(s, loc, c.day.y, c.day.m, c.day.d); got != want {
					t.Errorf("%s on %v in %s: %d runs, want %d", spec, c.day, c.zone, got, want)
				}
			})
		}
	}
}

// Next never returns a time inside a gap's missing wall times, never
// repeats a fixed wall time, and returns its times in the schedule's
// location.
func TestNextLocationOfResult(t *testing.T) {
	t.Parallel()
	ny := mustLoad(t, "America/New_York")
	s := mustParse(t, "0 9 * * *", cron.WithLocation(ny))
	got := s.Next(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	if got.Location() != ny {
		t.Errorf("Next returned a time in %v, want %v", got.Location(), ny)
	}
	if want := time.Date(2026, 1, 1, 9, 0, 0, 0, ny); !got.Equal(want) {
		t.Errorf("Next = %v, want %v", got, want)
	}
}

// Next works far from today and never panics on extreme times.
func TestNextExtremeTimes(t *testing.T) {
	t.Parallel()
	for _, spec := range []string{"* * * * *", "0 0 29 2 *", "@every 1h", "30 2 * * *"} {
		s := mustParse(t, spec, cron.WithLocation(mustLoad(t, "America/New_York")))
		for _, from := range []time.Time{
			{},
			time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
			time.Date(1883, 11, 18, 12, 0, 0, 0, time.UTC), // New York's LMT -> EST
			time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC),
			time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
			time.Unix(1<<40, 0),
			time.Unix(-1<<40, 0),
		} {
			got := s.Next(from)
			if !got.After(from) {
				t.Errorf("%s: Next(%v) = %v, not after", spec, from, got)
			}
		}
	}
}

// Across the last UTC day of a leap year served by New York's TZ footer
// rule, where Go's ZoneBounds misreports the zone's end (golang/go#81583).
func TestNextGoIssue81583(t *testing.T) {
	t.Parallel()
	runNextCases(t, []nextCase{
		{"America/New_York", "0 * * * *", "2040-12-30T18:30:00-05:00", []string{
			"2040-12-30T19:00:00-05:00 EST", "2040-12-30T20:00:00-05:00 EST", "2040-12-30T21:00:00-05:00 EST"}},
		{"America/New_York", "0 12 * * *", "2040-12-30T13:00:00-05:00", []string{
			"2040-12-31T12:00:00-05:00 EST", "2041-01-01T12:00:00-05:00 EST"}},
		{"Europe/Berlin", "*/30 * * * *", "2040-12-31T12:10:00+01:00", []string{
			"2040-12-31T12:30:00+01:00 CET", "2040-12-31T13:00:00+01:00 CET"}},
	})
	ny := mustLoad(t, "America/New_York")
	if got := countDay(mustParse(t, "0 * * * *", cron.WithLocation(ny)), ny, 2040, 12, 31); got != 24 {
		t.Errorf("hourly on 2040-12-31 in New York: %d runs, want 24", got)
	}
}
