package cron_test

import (
	"errors"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/jobkit/jobkit/cron"
)

func TestEveryRejects(t *testing.T) {
	t.Parallel()
	for _, d := range []time.Duration{0, -1, -time.Hour, 1, time.Millisecond, time.Second - 1} {
		s, err := cron.Every(d, time.Now())
		if !errors.Is(err, cron.ErrInvalidInterval) || s != nil {
			t.Errorf("Every(%v) = %v, %v; want nil, ErrInvalidInterval", d, s, err)
		}
	}
}

func TestEveryNext(t *testing.T) {
	t.Parallel()
	ny := mustLoad(t, "America/New_York")
	anchor := time.Date(2026, 1, 1, 12, 0, 0, 0, ny)
	s, err := cron.Every(90*time.Minute, anchor)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, want time.Time }{
		{time.Time{}, anchor},                  // before the anchor: the anchor
		{anchor.Add(-1), anchor},               // just before it
		{anchor, anchor.Add(90 * time.Minute)}, // strictly after
		{anchor.Add(1), anchor.Add(90 * time.Minute)},
		{anchor.Add(90*time.Minute - 1), anchor.Add(90 * time.Minute)},
		{anchor.Add(90 * time.Minute), anchor.Add(180 * time.Minute)},
		{anchor.Add(1000*90*time.Minute + 5), anchor.Add(1001 * 90 * time.Minute)},
	} {
		got := s.Next(c.from)
		if !got.Equal(c.want) || got.Location() != ny {
			t.Errorf("Next(%v) = %v, want %v in %v", c.from, got, c.want, ny)
		}
	}
	if s.Interval() != 90*time.Minute || !s.Anchor().Equal(anchor) || s.String() != "@every 1h30m0s" {
		t.Errorf("Interval, Anchor, String = %v, %v, %q", s.Interval(), s.Anchor(), s.String())
	}
}

// @every follows real time across both transitions: once per real hour.
func TestEveryDST(t *testing.T) {
	t.Parallel()
	ny := mustLoad(t, "America/New_York")
	fall, err := cron.Every(time.Hour, time.Date(2026, 11, 1, 0, 0, 0, 0, ny))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := nexts(fall, fall.Anchor(), 3), []string{
		"2026-11-01T01:00:00-04:00 EDT", "2026-11-01T01:00:00-05:00 EST", "2026-11-01T02:00:00-05:00 EST",
	}; !slices.Equal(got, want) {
		t.Errorf("fall back: %q, want %q", got, want)
	}
	spring := mustParse(t, "@every 1h", cron.WithLocation(ny), cron.WithAnchor(time.Date(2026, 3, 8, 0, 0, 0, 0, ny)))
	if got, want := nexts(spring, time.Date(2026, 3, 8, 0, 0, 0, 0, ny), 3), []string{
		"2026-03-08T01:00:00-05:00 EST", "2026-03-08T03:00:00-04:00 EDT", "2026-03-08T04:00:00-04:00 EDT",
	}; !slices.Equal(got, want) {
		t.Errorf("spring forward: %q, want %q", got, want)
	}
	day := mustParse(t, "@every 24h", cron.WithLocation(ny), cron.WithAnchor(time.Date(2026, 3, 7, 12, 0, 0, 0, ny)))
	if got, want := nexts(day, time.Date(2026, 3, 7, 12, 0, 0, 0, ny), 1), []string{
		"2026-03-08T13:00:00-04:00 EDT",
	}; !slices.Equal(got, want) {
		t.Errorf("24h across spring forward: %q, want %q", got, want)
	}
}

func TestEveryParse(t *testing.T) {
	t.Parallel()
	anchor := time.Now() // has a monotonic clock reading
	s := mustParse(t, "@every 1.5s", cron.WithAnchor(anchor), cron.WithLocation(time.UTC))
	is, ok := s.(*cron.IntervalSchedule)
	if !ok {
		t.Fatalf("Parse(@every) returned %T, want *cron.IntervalSchedule", s)
	}
	if is.Interval() != 1500*time.Millisecond {
		t.Errorf("Interval() = %v, want 1.5s (kept exactly)", is.Interval())
	}
	if strings.Contains(is.Anchor().String(), "m=") || !is.Anchor().Equal(anchor) {
		t.Errorf("Anchor() = %v, want %v without a monotonic reading", is.Anchor(), anchor)
	}
	if got := s.Next(anchor); !got.Equal(anchor.Add(1500*time.Millisecond)) || got.Location() != time.UTC {
		t.Errorf("Next(anchor) = %v", got)
	}
}

// nanos returns t as nanoseconds since the Unix epoch, without overflow.
func nanos(t time.Time) *big.Int {
	n := big.NewInt(t.Unix())
	n.Mul(n, big.NewInt(1e9))
	return n.Add(n, big.NewInt(int64(t.Nanosecond())))
}

// Next is anchor + k·d, the first strictly after t, for any anchor and t,
// even when they are more than 292 years apart (a Duration overflows).
func TestEveryProperty(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		genTime := func(label string) time.Time {
			sec := rapid.Int64Range(-62135596800, 253402300799).Draw(t, label+"Sec") // years 1..9999
			if rapid.Bool().Draw(t, label+"Near") {
				sec = rapid.Int64Range(1.7e9, 1.8e9).Draw(t, label+"SecNear")
			}
			return time.Unix(sec, rapid.Int64Range(0, 999999999).Draw(t, label+"Nsec"))
		}
		anchor, from := genTime("anchor"), genTime("from")
		d := time.Duration(rapid.Int64Range(int64(time.Second), 1<<62).Draw(t, "d"))
		if rapid.Bool().Draw(t, "small") {
			d = time.Duration(rapid.Int64Range(int64(time.Second), int64(48*time.Hour)).Draw(t, "dSmall"))
		}
		s, err := cron.Every(d, anchor)
		if err != nil {
			t.Fatal(err)
		}
		got := s.Next(from)
		if !got.After(from) {
			t.Fatalf("Next(%v) = %v, not after", from, got)
		}
		if from.Before(anchor) {
			if !got.Equal(anchor) {
				t.Fatalf("Next(%v) before the anchor = %v, want the anchor %v", from, got, anchor)
			}
			return
		}
		diff := new(big.Int).Sub(nanos(got), nanos(anchor))
		k, rem := new(big.Int).QuoRem(diff, big.NewInt(int64(d)), new(big.Int))
		if rem.Sign() != 0 || k.Sign() <= 0 {
			t.Fatalf("Next(%v) = %v is not anchor + k·d (k=%v, rem=%v)", from, got, k, rem)
		}
		if !got.Add(-d).Before(from) && !got.Add(-d).Equal(from) {
			t.Fatalf("Next(%v) = %v skips %v", from, got, got.Add(-d))
		}
	})
}
