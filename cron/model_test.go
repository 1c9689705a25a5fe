package cron_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	robfig "github.com/robfig/cron/v3"
	"pgregory.net/rapid"

	"github.com/jobkit/jobkit/cron"
)

// genField is one generated spec field: its text and, independently of any
// parser, the values it allows.
type genField struct {
	text string
	set  uint64
	star bool // written * or */1: robfig's "star" for the day rule
}

func (f genField) has(v int) bool { return f.set&(1<<v) != 0 }

// drawField draws a field over lo..hi. starBias is the chance of a plain *.
func drawField(t *rapid.T, name string, lo, hi int, starBias float64) genField {
	span := hi - lo + 1
	bits := func(a, b, step int) uint64 {
		var m uint64
		for v := a; v <= b; v += step {
			m |= 1 << v
		}
		return m
	}
	if rapid.Float64Range(0, 1).Draw(t, name+"Star") < starBias {
		return genField{"*", bits(lo, hi, 1), true}
	}
	switch rapid.IntRange(0, 4).Draw(t, name+"Form") {
	case 0: // a value
		v := rapid.IntRange(lo, hi).Draw(t, name+"Value")
		return genField{fmt.Sprint(v), 1 << v, false}
	case 1: // a range
		a := rapid.IntRange(lo, hi).Draw(t, name+"From")
		b := rapid.IntRange(a, hi).Draw(t, name+"To")
		return genField{fmt.Sprintf("%d-%d", a, b), bits(a, b, 1), false}
	case 2: // */n
		n := rapid.IntRange(1, span).Draw(t, name+"Step")
		return genField{fmt.Sprintf("*/%d", n), bits(lo, hi, n), n == 1}
	case 3: // a-b/n
		a := rapid.IntRange(lo, hi).Draw(t, name+"From")
		b := rapid.IntRange(a, hi).Draw(t, name+"To")
		n := rapid.IntRange(1, span).Draw(t, name+"Step")
		return genField{fmt.Sprintf("%d-%d/%d", a, b, n), bits(a, b, n), false}
	default: // a list
		k := rapid.IntRange(2, 4).Draw(t, name+"Len")
		var parts []string
		var m uint64
		for i := range k {
			v := rapid.IntRange(lo, hi).Draw(t, fmt.Sprint(name, "Item", i))
			parts = append(parts, fmt.Sprint(v))
			m |= 1 << v
		}
		return genField{strings.Join(parts, ","), m, false}
	}
}

// genSpec is a generated spec and the model's reading of it.
type genSpec struct {
	text                            string
	seconds                         bool // six fields
	sec, min, hour, dom, month, dow genField
}

// drawSpec draws a spec. Fixed hours are often drawn from hints (the wall
// hours around a transition), or the interesting cases would be rare.
func drawSpec(t *rapid.T, hints ...int) genSpec {
	var g genSpec
	g.seconds = rapid.Float64Range(0, 1).Draw(t, "sixFields") < 0.25
	if g.seconds {
		g.sec = drawField(t, "sec", 0, 59, 0.2)
	} else {
		g.sec = genField{"0", 1, false}
	}
	g.min = drawField(t, "min", 0, 59, 0.2)
	g.hour = drawField(t, "hour", 0, 23, 0.4)
	if len(hints) > 0 && !g.hour.star && rapid.Bool().Draw(t, "hintHour") {
		h := rapid.SampledFrom(hints).Draw(t, "hour")
		g.hour = genField{fmt.Sprint(h), 1 << h, false}
		if rapid.Bool().Draw(t, "hintList") {
			h2 := rapid.IntRange(0, 23).Draw(t, "hour2")
			g.hour = genField{fmt.Sprintf("%d,%d", h, h2), 1<<h | 1<<h2, false}
		}
	}
	g.dom = drawField(t, "dom", 1, 31, 0.75)
	g.month = drawField(t, "month", 1, 12, 0.85)
	g.dow = drawField(t, "dow", 0, 6, 0.7)
	parts := []string{g.min.text, g.hour.text, g.dom.text, g.month.text, g.dow.text}
	if g.seconds {
		parts = append([]string{g.sec.text}, parts...)
	}
	g.text = strings.Join(parts, " ")
	return g
}

func (g genSpec) allHours() bool { return g.hour.set == 1<<24-1 }

// matches reports whether wall time w (seconds, read as UTC) matches.
func (g genSpec) matches(w int64) bool {
	c := time.Unix(w, 0).UTC()
	if !g.sec.has(c.Second()) || !g.min.has(c.Minute()) || !g.hour.has(c.Hour()) || !g.month.has(int(c.Month())) {
		return false
	}
	domOK, dowOK := g.dom.has(c.Day()), g.dow.has(int(c.Weekday()))
	if g.dom.star || g.dow.star {
		return domOK && dowOK
	}
	return domOK || dowOK
}

func offsetAt(loc *time.Location, u int64) int64 {
	_, off := time.Unix(u, 0).In(loc).Zone()
	return int64(off)
}

// modelRuns is the brute-force reading of the rules: it visits every step
// seconds from before the window and returns the activations in (a, b].
//
//   - Every-hour specs: an instant is an activation when its wall time
//     matches.
//   - Fixed-hour specs: an instant is an activation when its wall time
//     matches and has not been seen at an earlier instant, or when the clock
//     jumps forward at it over a wall time that matches.
//
// It assumes offset changes fall on multiples of step, true of the zones and
// years the property draws.
func modelRuns(g genSpec, loc *time.Location, a, b int64, step int64, lead int64) []int64 {
	seen := make(map[int64]bool)
	fixed := !g.allHours()
	u := (a - lead) / step * step
	prevOff := offsetAt(loc, u-step)
	var out []int64
	for ; u <= b; u += step {
		off := offsetAt(loc, u)
		w := u + off
		act := g.matches(w)
		if fixed {
			act = act && !seen[w]
			seen[w] = true
			if off > prevOff {
				for x := u + prevOff; x < u+off && !act; x += step {
					act = g.matches(x)
				}
			}
		}
		if act && u > a {
			out = append(out, u)
		}
		prevOff = off
	}
	return out
}

var modelZones = []string{
	"UTC", "America/New_York", "Europe/Berlin", "Asia/Kolkata", "Australia/Lord_Howe",
	"America/Sao_Paulo", "Pacific/Apia", "America/Havana", "Europe/Dublin", "America/Santiago",
}

// drawWindow draws the centre of a window: usually a transition of the zone.
func drawWindow(t *rapid.T, loc *time.Location) time.Time {
	year := rapid.IntRange(2005, 2060).Draw(t, "year")
	if loc.String() == "Pacific/Apia" && rapid.Bool().Draw(t, "apia2011") {
		year = 2011 // the skipped 30 December
	}
	at := time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(rapid.Int64Range(0, 365*86400).Draw(t, "at")) * time.Second)
	if rapid.Float64Range(0, 1).Draw(t, "onTransition") < 0.8 {
		if _, end := at.In(loc).ZoneBounds(); !end.IsZero() {
			at = end.Add(time.Duration(rapid.Int64Range(-3600, 3600).Draw(t, "shift")) * time.Second)
		}
	}
	return at
}

// TestNextMatchesModel compares Next with the brute-force model over windows
// around daylight-saving transitions, and checks the properties the rules
// promise directly.
func TestNextMatchesModel(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		loc := mustLoad(t, rapid.SampledFrom(modelZones).Draw(t, "zone"))
		centre := drawWindow(t, loc)
		// The wall hours on both sides of the centre, under both offsets.
		var hints []int
		for _, u := range []int64{centre.Unix() - 3600, centre.Unix(), centre.Unix() + 3600} {
			for _, off := range []int64{offsetAt(loc, u-3600), offsetAt(loc, u+3600)} {
				hints = append(hints, time.Unix(u+off, 0).UTC().Hour())
			}
		}
		g := drawSpec(t, hints...)
		s, err := cron.Parse(g.text, cron.WithLocation(loc))
		if err != nil {
			// The generator can draw specs that never fire (31 in
			// April); those and only those are refused.
			if !neverFires(g) {
				t.Fatalf("Parse(%q): %v", g.text, err)
			}
			return
		}
		if neverFires(g) {
			t.Fatalf("Parse(%q) accepted a spec that never fires", g.text)
		}
		step, half, lead := int64(60), int64(26*3600), int64(26*3600)
		if g.seconds {
			step, half, lead = 1, 3*3600, 3*3600
		}
		a, b := centre.Unix()-half, centre.Unix()+half
		want := modelRuns(g, loc, a, b, step, lead)

		var got []int64
		from := time.Unix(a, 0)
		for i := 0; ; i++ {
			n := s.Next(from)
			if n.IsZero() || n.Unix() > b || i > 2*int(half) {
				break
			}
			if !n.After(from) {
				t.Fatalf("Next(%v) = %v: not strictly after", from, n)
			}
			if n.Location() != loc {
				t.Fatalf("Next returned a time in %v", n.Location())
			}
			got = append(got, n.Unix())
			from = n
		}
		if d := firstDiff(got, want); d >= 0 {
			show := func(xs []int64) string {
				if d >= len(xs) {
					return "(none)"
				}
				return time.Unix(xs[d], 0).In(loc).Format(layout)
			}
			t.Fatalf("spec %q in %s around %v: run %d: Next gives %s, model %s (%d runs vs %d)",
				g.text, loc, centre.In(loc).Format(layout), d, show(got), show(want), len(got), len(want))
		}

		// The rules, stated directly.
		seenWall := make(map[int64]bool)
		for _, u := range got {
			off := offsetAt(loc, u)
			w := u + off
			if !g.matches(w) {
				// Only a fixed-hour spec, at the end of a gap
				// that swallowed a matching wall time.
				prev := offsetAt(loc, u-1)
				if g.allHours() || prev >= off || !anyMatch(g, u+prev, u+off) {
					t.Fatalf("spec %q: %s neither matches nor ends a gap over a match", g.text, time.Unix(u, 0).In(loc).Format(layout))
				}
			}
			if !g.allHours() {
				if seenWall[w] {
					t.Fatalf("spec %q: wall time %s runs twice", g.text, time.Unix(w, 0).UTC().Format("2006-01-02 15:04:05"))
				}
				seenWall[w] = true
			}
		}
	})
}

func anyMatch(g genSpec, from, to int64) bool {
	for x := from; x < to; x++ {
		if g.matches(x) {
			return true
		}
	}
	return false
}

// neverFires: no allowed month has an allowed day, in any year.
func neverFires(g genSpec) bool {
	for y := 2000; y < 2028; y++ { // every weekday of every month, leap and common
		for m := time.January; m <= time.December; m++ {
			if !g.month.has(int(m)) {
				continue
			}
			for d := 1; d <= time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day(); d++ {
				domOK, dowOK := g.dom.has(d), g.dow.has(int(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Weekday()))
				if (g.dom.star || g.dow.star) && domOK && dowOK || !(g.dom.star || g.dow.star) && (domOK || dowOK) {
					return false
				}
			}
		}
	}
	return true
}

func firstDiff(a, b []int64) int {
	for i := range max(len(a), len(b)) {
		if i >= len(a) || i >= len(b) || a[i] != b[i] {
			return i
		}
	}
	return -1
}

// Where there are no offset changes, Next agrees with robfig's
// SpecSchedule.Next, over more than eighty years and every day rule.
func TestNextMatchesRobfigWithoutDST(t *testing.T) {
	t.Parallel()
	p := robfig.NewParser(robfig.SecondOptional | robfig.Minute | robfig.Hour | robfig.Dom | robfig.Month | robfig.Dow | robfig.Descriptor)
	rapid.Check(t, func(t *rapid.T) {
		g := drawSpec(t)
		loc := mustLoad(t, rapid.SampledFrom([]string{"UTC", "Asia/Kolkata", "Asia/Tokyo"}).Draw(t, "zone"))
		s, err := cron.Parse(g.text, cron.WithLocation(loc))
		if err != nil {
			return
		}
		rs, err := p.Parse(g.text)
		if err != nil {
			t.Fatalf("robfig refuses %q: %v", g.text, err)
		}
		rs.(*robfig.SpecSchedule).Location = loc
		from := time.Unix(rapid.Int64Range(0, 3.8e9).Draw(t, "from"), rapid.Int64Range(0, 1e9-1).Draw(t, "nsec"))
		for range 5 {
			got, want := s.Next(from), rs.Next(from)
			if want.IsZero() { // robfig gives up after five years
				return
			}
			if !got.Equal(want) {
				t.Fatalf("spec %q in %s: Next(%v) = %v, robfig %v", g.text, loc, from, got, want)
			}
			from = got
		}
	})
}
