package cron_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/cron"
)

// Over ten simulated days, every job runs at exactly the activations of its
// schedule, and starts at that instant: five fields, seconds, descriptors,
// @every, a zone prefix, and several zones.
func TestEngine_ExactTimes(t *testing.T) {
	t.Parallel()
	jobs := []struct{ name, zone, spec string }{
		{"quarter-hour", "UTC", "*/15 * * * *"},
		{"seconds", "Asia/Kolkata", "*/20 * * * * *"},
		{"seconds-list", "UTC", "5,35 30 * * * *"},
		{"hourly", "Europe/Berlin", "@hourly"},
		{"daily", "America/New_York", "@daily"},
		{"weekly", "Australia/Sydney", "@weekly"},
		{"monthly", "UTC", "@monthly"},
		{"every-90m", "UTC", "@every 90m"},
		{"every-7s", "Europe/Berlin", "@every 7s"},
		{"weekdays", "Europe/Berlin", "0 9 * * mon-fri"},
		{"twice-monthly", "America/New_York", "30 2 1,15 * *"},
		{"tokyo-prefix", "UTC", "CRON_TZ=Asia/Tokyo 0 0 * * *"},
		{"kathmandu", "Asia/Kathmandu", "45 */6 * * *"},
	}
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		start := time.Date(2026, 1, 28, 13, 7, 11, 0, time.UTC)
		sleepUntil(start)
		e := startEngine(t, cron.Config{Workers: 4})
		log := newRunLog()
		scheds := map[string]cron.Schedule{}
		for _, j := range jobs {
			loc := mustLoad(t, j.zone)
			must(t, e.RegisterSpec(ctx, j.name, j.spec, log.fn(j.name, nil), cron.WithLocation(loc)))
			// The same schedule, anchored at the registration as
			// RegisterSpec anchors @every.
			scheds[j.name] = mustParse(t, j.spec, cron.WithLocation(loc), cron.WithAnchor(start))
		}
		// The end falls on no activation: the test does not race a run.
		end := start.Add(10*24*time.Hour + 500*time.Millisecond)
		sleepUntil(end)
		for _, j := range jobs {
			runs := log.get(j.name)
			want := enumerate(scheds[j.name], start, end)
			equalStrings(t, j.name, scheduled(runs), want)
			for _, r := range runs {
				if !r.Start.Equal(r.Scheduled) {
					t.Errorf("%s: run for %v started at %v", j.name, r.Scheduled, r.Start)
				}
			}
			info, ok := e.Job(j.name)
			if !ok || info.Runs != int64(len(want)) || info.Failures != 0 || info.LastErr != nil {
				t.Errorf("%s: Job = %+v, %v; want %d runs", j.name, info, ok, len(want))
			}
			if n := scheds[j.name].Next(end); !info.Next.Equal(n) {
				t.Errorf("%s: Next = %v, want %v", j.name, info.Next, n)
			}
		}
		if len(log.get("seconds")) != 10*24*180 {
			t.Errorf("seconds: %d runs, want %d", len(log.get("seconds")), 10*24*180)
		}
		log.checkNoOverlap(t)
	})
}

// Daylight saving time in New York and Berlin: a fixed-hour job whose wall
// time falls in the spring-forward gap runs once at the first instant after
// it; one whose wall time happens twice runs once, at its first occurrence;
// hourly and @every jobs run once per real hour across both changes.
func TestEngine_DST(t *testing.T) {
	t.Parallel()
	cases := []struct {
		zone     string
		from     string // local midnight before the change day
		spec     string
		want     []string
		realHour bool // runs are exactly one real hour apart
	}{
		{zone: "America/New_York", from: "2026-03-07T00:00:00-05:00", spec: "30 2 * * *", want: []string{
			"2026-03-07T02:30:00-05:00 EST",
			"2026-03-08T03:00:00-04:00 EDT", // 02:30 does not exist: once, at the end of the gap
			"2026-03-09T02:30:00-04:00 EDT",
		}},
		{zone: "America/New_York", from: "2026-10-31T00:00:00-04:00", spec: "30 1 * * *", want: []string{
			"2026-10-31T01:30:00-04:00 EDT",
			"2026-11-01T01:30:00-04:00 EDT", // 01:30 happens twice: the first only
			"2026-11-02T01:30:00-05:00 EST",
		}},
		{zone: "Europe/Berlin", from: "2026-03-28T00:00:00+01:00", spec: "30 2 * * *", want: []string{
			"2026-03-28T02:30:00+01:00 CET",
			"2026-03-29T03:00:00+02:00 CEST",
			"2026-03-30T02:30:00+02:00 CEST",
		}},
		{zone: "Europe/Berlin", from: "2026-10-24T00:00:00+02:00", spec: "30 2 * * *", want: []string{
			"2026-10-24T02:30:00+02:00 CEST",
			"2026-10-25T02:30:00+02:00 CEST",
			"2026-10-26T02:30:00+01:00 CET",
		}},
		{zone: "America/New_York", from: "2026-03-07T00:00:00-05:00", spec: "0 * * * *", realHour: true},
		{zone: "America/New_York", from: "2026-10-31T00:00:00-04:00", spec: "0 * * * *", realHour: true},
		{zone: "Europe/Berlin", from: "2026-03-28T00:00:00+01:00", spec: "@hourly", realHour: true},
		{zone: "Europe/Berlin", from: "2026-10-24T00:00:00+02:00", spec: "@hourly", realHour: true},
		{zone: "Europe/Berlin", from: "2026-10-24T00:00:00+02:00", spec: "@every 1h", realHour: true},
		{zone: "America/New_York", from: "2026-03-07T00:00:00-05:00", spec: "@every 1h", realHour: true},
	}
	for _, c := range cases {
		synctest.Test(t, func(t *testing.T) {
			ctx := context.Background()
			loc := mustLoad(t, c.zone)
			from := mustTime(t, c.from)
			sleepUntil(from.Add(-time.Minute))
			e := startEngine(t, cron.Config{})
			log := newRunLog()
			must(t, e.RegisterSpec(ctx, "job", c.spec, log.fn("job", nil), cron.WithLocation(loc)))
			sleepUntil(from.Add(72*time.Hour - 30*time.Minute))
			runs := log.get("job")
			if c.want != nil {
				equalStrings(t, c.zone+" "+c.spec, scheduled(runs), c.want)
			}
			if c.realHour {
				// From a minute before from to 71.5 hours after it:
				// 72 runs on the hour, 71 of @every 1h from then.
				want := 72
				if c.spec == "@every 1h" {
					want = 71
				}
				if len(runs) != want {
					t.Errorf("%s %s: %d runs, want %d", c.zone, c.spec, len(runs), want)
				}
				for i := 1; i < len(runs); i++ {
					if d := runs[i].Start.Sub(runs[i-1].Start); d != time.Hour {
						t.Errorf("%s %s: %v after the previous run at %s", c.zone, c.spec, d, runs[i].Scheduled.Format(layout))
					}
				}
			}
			for _, r := range runs {
				if !r.Start.Equal(r.Scheduled) {
					t.Errorf("run for %v started at %v", r.Scheduled, r.Start)
				}
			}
		})
	}
}
