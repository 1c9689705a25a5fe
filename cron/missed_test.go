package cron_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/jobkit/jobkit/cron"
)

func TestRunEachBounds(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, -1, -1 << 62, cron.MaxRunEach + 1, 1 << 62} {
		if m, err := cron.RunEach(n); !errors.Is(err, cron.ErrInvalidBound) || m != cron.Skip {
			t.Errorf("RunEach(%d) = %v, %v; want Skip, ErrInvalidBound", n, m, err)
		}
	}
	if m, err := cron.RunEach(1); err != nil || m != cron.RunOnce {
		t.Errorf("RunEach(1) = %v, %v; want RunOnce", m, err)
	}
	m, err := cron.RunEach(cron.MaxRunEach)
	if err != nil {
		t.Fatal(err)
	}
	var zero cron.Missed
	for _, c := range []struct {
		m    cron.Missed
		want string
	}{{zero, "Skip"}, {cron.Skip, "Skip"}, {cron.RunOnce, "RunOnce"}, {m, "RunEach(10000)"}} {
		if got := c.m.String(); got != c.want {
			t.Errorf("String() = %q, want %q", got, c.want)
		}
	}
}

func mustRunEach(tb fataler, n int) cron.Missed {
	m, err := cron.RunEach(n)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

func fmtTimes(ts []time.Time) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.UTC().Format("2006-01-02T15:04:05")
	}
	return out
}

func TestDue(t *testing.T) {
	t.Parallel()
	minutely := mustParse(t, "* * * * *", cron.WithLocation(time.UTC))
	at := func(hms string) time.Time { return mustTime(t, "2026-01-01T"+hms+"Z") }
	cases := []struct {
		name      string
		last, now time.Time
		m         cron.Missed
		runs      []string
		next      string
	}{
		{"skip", at("10:00:00"), at("10:05:30"), cron.Skip, nil, "10:06:00"},
		{"once", at("10:00:00"), at("10:05:30"), cron.RunOnce, []string{"10:05:00"}, "10:06:00"},
		{"each 3", at("10:00:00"), at("10:05:30"), mustRunEach(t, 3), []string{"10:03:00", "10:04:00", "10:05:00"}, "10:06:00"},
		{"each more than missed", at("10:00:00"), at("10:05:30"), mustRunEach(t, 100),
			[]string{"10:01:00", "10:02:00", "10:03:00", "10:04:00", "10:05:00"}, "10:06:00"},
		// An activation exactly at now is not missed: it is next, due at once.
		{"on time", at("10:00:00"), at("10:05:00"), mustRunEach(t, 2), []string{"10:03:00", "10:04:00"}, "10:05:00"},
		{"on time skip", at("10:00:00"), at("10:01:00"), cron.Skip, nil, "10:01:00"},
		// A run that settles at the instant it was scheduled: no rerun.
		{"settled at once", at("10:00:00"), at("10:00:00"), cron.RunOnce, nil, "10:01:00"},
		{"a nanosecond later", at("10:00:00"), at("10:00:00").Add(1), cron.RunOnce, nil, "10:01:00"},
		{"nothing missed", at("10:00:00"), at("10:00:59"), cron.RunOnce, nil, "10:01:00"},
		// The clock went back.
		{"clock back", at("10:00:00"), at("09:00:00"), cron.RunOnce, nil, "10:01:00"},
		// Registered in the middle of a minute.
		{"registered mid-minute", at("10:00:30"), at("10:02:10"), mustRunEach(t, 5), []string{"10:01:00", "10:02:00"}, "10:03:00"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			runs, next := cron.Due(minutely, c.last, c.now, c.m)
			var want []string
			for _, r := range c.runs {
				want = append(want, "2026-01-01T"+r)
			}
			if got := fmtTimes(runs); !slices.Equal(got, want) && (len(got) != 0 || len(want) != 0) {
				t.Errorf("runs = %q, want %q", got, want)
			}
			if got := fmtTimes([]time.Time{next})[0]; got != "2026-01-01T"+c.next {
				t.Errorf("next = %s, want %s", got, c.next)
			}
		})
	}
}

// counting counts calls of Next.
type counting struct {
	s cron.Schedule
	n int
}

func (c *counting) Next(t time.Time) time.Time { c.n++; return c.s.Next(t) }

// A job every second, down for a year: Due finds the latest missed second
// with a handful of Next calls, not 31 million.
func TestDueBoundedWork(t *testing.T) {
	t.Parallel()
	last := mustTime(t, "2025-01-01T00:00:00Z")
	now := mustTime(t, "2026-01-01T00:00:00.5Z")
	for _, c := range []struct {
		spec     string
		m        cron.Missed
		maxCalls int
		latest   string
		runs     int
	}{
		{"* * * * * *", cron.RunOnce, 5, "2026-01-01T00:00:00", 1},
		{"* * * * * *", mustRunEach(t, cron.MaxRunEach), 2*cron.MaxRunEach + 5, "2026-01-01T00:00:00", cron.MaxRunEach},
		{"@every 1s", cron.RunOnce, 5, "2026-01-01T00:00:00", 1},
		{"0 0 1 * *", mustRunEach(t, 3), 64, "2026-01-01T00:00:00", 3},
		{"0 0 1 1 *", cron.RunOnce, 64, "2026-01-01T00:00:00", 1},
		{"0 0 29 2 *", cron.RunOnce, 64, "", 0},
	} {
		s := &counting{s: mustParse(t, c.spec, cron.WithLocation(time.UTC))}
		runs, next := cron.Due(s, last, now, c.m)
		if len(runs) != c.runs || (c.runs > 0 && fmtTimes(runs[len(runs)-1:])[0] != c.latest) {
			t.Errorf("%s %v: %d runs ending %q, want %d ending %s", c.spec, c.m, len(runs), fmtTimes(runs), c.runs, c.latest)
		}
		for i := 1; i < len(runs); i++ {
			if !runs[i].After(runs[i-1]) {
				t.Errorf("%s %v: runs not increasing at %d: %v, %v", c.spec, c.m, i, runs[i-1], runs[i])
			}
		}
		if !next.After(now) {
			t.Errorf("%s: next %v is not after now %v", c.spec, next, now)
		}
		t.Logf("%s %v: %d calls of Next", c.spec, c.m, s.n)
		if s.n > c.maxCalls {
			t.Errorf("%s %v: %d calls of Next, want at most %d", c.spec, c.m, s.n, c.maxCalls)
		}
	}
}

// From the zero time (a job that never ran), far more than a Duration spans.
func TestDueFromZeroTime(t *testing.T) {
	t.Parallel()
	s := &counting{s: mustParse(t, "* * * * *", cron.WithLocation(time.UTC))}
	now := mustTime(t, "2026-01-01T10:05:30Z")
	runs, next := cron.Due(s, time.Time{}, now, mustRunEach(t, 2))
	if got, want := fmtTimes(runs), []string{"2026-01-01T10:04:00", "2026-01-01T10:05:00"}; !slices.Equal(got, want) {
		t.Errorf("runs = %q, want %q", got, want)
	}
	if !next.Equal(mustTime(t, "2026-01-01T10:06:00Z")) {
		t.Errorf("next = %v", next)
	}
	if s.n > 300 {
		t.Errorf("%d calls of Next", s.n)
	}
}

// finite fires at a fixed list of times.
type finite []time.Time

func (f finite) Next(t time.Time) time.Time {
	for _, a := range f {
		if a.After(t) {
			return a
		}
	}
	return time.Time{}
}

func TestDueFiniteSchedule(t *testing.T) {
	t.Parallel()
	base := mustTime(t, "2026-01-01T00:00:00Z")
	f := finite{base.Add(time.Hour), base.Add(2 * time.Hour), base.Add(3 * time.Hour)}
	runs, next := cron.Due(f, base, base.Add(10*time.Hour), mustRunEach(t, 10))
	if len(runs) != 3 || !runs[0].Equal(f[0]) || !runs[2].Equal(f[2]) || !next.IsZero() {
		t.Errorf("Due = %v, %v; want all three and no next", runs, next)
	}
	runs, next = cron.Due(f, base, base.Add(150*time.Minute), cron.RunOnce)
	if len(runs) != 1 || !runs[0].Equal(f[1]) || !next.Equal(f[2]) {
		t.Errorf("Due = %v, %v; want [%v] and %v", runs, next, f[1], f[2])
	}
}

// Schedules that break the contract get bounded work and no panic.
type brokenFunc func(time.Time) time.Time

func (f brokenFunc) Next(t time.Time) time.Time { return f(t) }

func TestDueBrokenSchedules(t *testing.T) {
	t.Parallel()
	last := mustTime(t, "2026-01-01T00:00:00Z")
	now := last.Add(24 * time.Hour)
	for name, f := range map[string]brokenFunc{
		"returns t":      func(t time.Time) time.Time { return t },
		"goes back":      func(t time.Time) time.Time { return t.Add(-time.Hour) },
		"always zero":    func(time.Time) time.Time { return time.Time{} },
		"constant":       func(time.Time) time.Time { return last.Add(time.Hour) },
		"far future":     func(t time.Time) time.Time { return time.Unix(1<<62, 0) },
		"non-monotone":   func(t time.Time) time.Time { return t.Add(time.Duration(1+t.UnixNano()%7919) * time.Second) },
		"alternating":    func(t time.Time) time.Time { return t.Add(time.Duration(1+(t.Unix()%2)*3600) * time.Second) },
		"one nanosecond": func(t time.Time) time.Time { return t.Add(1) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := &counting{s: f}
			runs, _ := cron.Due(s, last, now, mustRunEach(t, 100))
			for _, r := range runs {
				if !r.After(last) || !r.Before(now) {
					t.Errorf("run %v outside (last, now)", r)
				}
			}
			t.Logf("%d calls of Next", s.n)
			if s.n > 100*(64*10+200) {
				t.Errorf("%d calls of Next", s.n)
			}
		})
	}
}

func TestDueNilSchedulePanics(t *testing.T) {
	t.Parallel()
	defer func() {
		r := recover()
		if s, ok := r.(string); !ok || !strings.HasPrefix(s, "cron: ") {
			t.Errorf("Due(nil) panicked with %v, want a cron: message", r)
		}
	}()
	cron.Due(nil, time.Time{}, time.Now(), cron.Skip)
}

// Due agrees with enumerating every activation with Next.
func TestDueProperty(t *testing.T) {
	t.Parallel()
	zones := []string{"UTC", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "Asia/Kolkata"}
	specs := []string{"* * * * *", "*/7 * * * *", "0 * * * *", "30 2 * * *", "30 1 * * *", "*/15 2 * * *",
		"0 */3 * * *", "*/20 * * * * *", "0 0 * * mon", "@every 13m", "@every 1h", "@every 1m30s"}
	rapid.Check(t, func(t *rapid.T) {
		loc := mustLoad(t, rapid.SampledFrom(zones).Draw(t, "zone"))
		spec := rapid.SampledFrom(specs).Draw(t, "spec")
		base := time.Unix(rapid.Int64Range(1.7e9, 1.8e9).Draw(t, "base"), 0)
		anchor := base.Add(-time.Duration(rapid.Int64Range(0, 1e15).Draw(t, "anchor")))
		s, err := cron.Parse(spec, cron.WithLocation(loc), cron.WithAnchor(anchor))
		if err != nil {
			t.Fatal(err)
		}
		last := base.Add(time.Duration(rapid.Int64Range(0, 1e12).Draw(t, "last")))
		now := last.Add(time.Duration(rapid.Int64Range(-1e9, 3*86400e9).Draw(t, "now")))
		if rapid.Bool().Draw(t, "nowOnActivation") {
			now = s.Next(last.Add(time.Duration(rapid.Int64Range(0, 86400e9).Draw(t, "shift"))))
		}
		n := rapid.IntRange(0, 50).Draw(t, "n")
		m := cron.Skip
		if n > 0 {
			m = mustRunEach(t, n)
		}

		// The model: enumerate.
		var missed []time.Time
		a := s.Next(last)
		for ; a.Before(now); a = s.Next(a) {
			missed = append(missed, a)
		}
		wantNext := a
		wantRuns := missed[max(0, len(missed)-n):]

		runs, next := cron.Due(s, last, now, m)
		if !next.Equal(wantNext) {
			t.Fatalf("next = %v, want %v", next, wantNext)
		}
		if len(runs) != len(wantRuns) {
			t.Fatalf("runs = %v, want %v", runs, wantRuns)
		}
		for i := range runs {
			if !runs[i].Equal(wantRuns[i]) {
				t.Fatalf("runs = %v, want %v", runs, wantRuns)
			}
		}
	})
}
