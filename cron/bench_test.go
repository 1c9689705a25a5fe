package cron_test

import (
	"testing"
	"time"

	robfig "github.com/robfig/cron/v3"

	"github.com/jobkit/jobkit/cron"
)

// The baseline is robfig/cron/v3's own parser and SpecSchedule.Next, run in
// the same benchmark binary. Compare with
//
//	go test ./cron -run '^$' -bench . -benchmem -count 6 > bench.txt
//	benchstat -col /impl bench.txt

var robfigParser = robfig.NewParser(robfig.SecondOptional | robfig.Minute | robfig.Hour |
	robfig.Dom | robfig.Month | robfig.Dow | robfig.Descriptor)

var benchSpecs = []struct{ name, zone, spec string }{
	{"quarter-hour", "UTC", "*/15 * * * *"},
	{"weekdays", "Europe/Berlin", "0 30 9 * * mon-fri"},
	{"daily-0230", "America/New_York", "30 2 * * *"},
	{"hourly", "America/New_York", "@hourly"},
	{"leap-day", "UTC", "0 0 29 2 *"},
}

var (
	sinkSchedule any
	sinkTime     time.Time
	sinkTimes    []time.Time
)

func BenchmarkParse(b *testing.B) {
	for _, c := range benchSpecs {
		loc := mustLoad(b, c.zone)
		b.Run("impl=jobkit/spec="+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s, err := cron.Parse(c.spec, cron.WithLocation(loc))
				if err != nil {
					b.Fatal(err)
				}
				sinkSchedule = s
			}
		})
		// robfig is given the zone the same way, already loaded (a
		// CRON_TZ= prefix would load it on every call).
		b.Run("impl=robfig/spec="+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s, err := robfigParser.Parse(c.spec)
				if err != nil {
					b.Fatal(err)
				}
				s.(*robfig.SpecSchedule).Location = loc
				sinkSchedule = s
			}
		})
	}
}

// froms are 64 starting points spread over 2026.
func froms() []time.Time {
	out := make([]time.Time, 64)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range out {
		out[i] = start.Add(time.Duration(i) * (365 * 24 * time.Hour / 64)).Add(time.Duration(i) * 7919 * time.Millisecond)
	}
	return out
}

func BenchmarkSpec_Next(b *testing.B) {
	fs := froms()
	for _, c := range benchSpecs {
		loc := mustLoad(b, c.zone)
		ours := mustParse(b, c.spec, cron.WithLocation(loc))
		theirs, err := robfigParser.Parse("CRON_TZ=" + c.zone + " " + c.spec)
		if err != nil {
			b.Fatal(err)
		}
		for _, impl := range []struct {
			name string
			s    interface{ Next(time.Time) time.Time }
		}{{"jobkit", ours}, {"robfig", theirs}} {
			b.Run("impl="+impl.name+"/spec="+c.name, func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					sinkTime = impl.s.Next(fs[i&63])
					i++
				}
			})
		}
	}
}

func BenchmarkEvery_Next(b *testing.B) {
	fs := froms()
	ours, err := cron.Every(90*time.Minute, time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		b.Fatal(err)
	}
	theirs := robfig.Every(90 * time.Minute)
	for _, impl := range []struct {
		name string
		s    interface{ Next(time.Time) time.Time }
	}{{"jobkit", ours}, {"robfig", theirs}} {
		b.Run("impl="+impl.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				sinkTime = impl.s.Next(fs[i&63])
				i++
			}
		})
	}
}

// BenchmarkDue: a job that fires every second, down for a year.
func BenchmarkDue(b *testing.B) {
	s := mustParse(b, "* * * * * *", cron.WithLocation(time.UTC))
	last := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	now := last.AddDate(1, 0, 0).Add(500 * time.Millisecond)
	each100, err := cron.RunEach(100)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		m    cron.Missed
	}{{"policy=Skip", cron.Skip}, {"policy=RunOnce", cron.RunOnce}, {"policy=RunEach100", each100}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkTimes, sinkTime = cron.Due(s, last, now, c.m)
			}
		})
	}
}
