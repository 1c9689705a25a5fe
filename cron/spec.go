package cron

import (
	"math/bits"
	"time"
)

// allHoursMask has a bit for each hour of the day.
const allHoursMask = 1<<24 - 1

// searchYears bounds the search for a matching wall time. The longest gap
// between two activations of a spec that can fire is eight years (the 29th of
// February across a century year that is not a leap year, such as 2100), so
// nine years always finds the next one.
const searchYears = 9

// maxSegments bounds the number of zone offset periods Next walks through.
// Real zones change offset at most a few times a year; this is a guard, not a
// limit any real zone reaches within searchYears.
const maxSegments = 1024

// specSchedule is a parsed five- or six-field spec or a descriptor other than
// @every. It is immutable.
type specSchedule struct {
	// Bit v is set when value v is allowed. robfig's star bit is cleared.
	second, minute, hour, month uint64
	// days[w] has bit d (1..31) set when day d of a month whose first day
	// is weekday w matches the day-of-month and day-of-week fields.
	days [7]uint64
	// allHours: the hour field allows every hour, so wall times follow
	// real time across offset changes (see the package doc).
	allHours bool
	loc      *time.Location
	text     string
}

// newSpec builds a specSchedule from robfig's field bits. robfig sets its
// star bit on a day field written *, ? or */1; as in robfig, when either day
// field has it, a day must match both fields, otherwise either.
func newSpec(text string, second, minute, hour, dom, month, dow uint64, loc *time.Location) *specSchedule {
	const star = 1 << 63
	and := dom&star != 0 || dow&star != 0
	s := &specSchedule{
		second: second &^ star,
		minute: minute &^ star,
		hour:   hour &^ star,
		month:  month &^ star,
		loc:    loc,
		text:   text,
	}
	s.allHours = s.hour == allHoursMask
	dom &^= star
	const weekly = 1 | 1<<7 | 1<<14 | 1<<21 | 1<<28 // one day a week from bit 0
	for w := range 7 {
		// Days of a month starting on weekday w that fall on weekday x
		// are d0, d0+7, … with d0 in 1..7.
		var byDow uint64
		for x := range 7 {
			if dow&(1<<x) != 0 {
				byDow |= weekly << ((x-w+7)%7 + 1)
			}
		}
		byDow &= dayBits(31)
		if and {
			s.days[w] = dom & byDow
		} else {
			s.days[w] = dom | byDow
		}
	}
	return s
}

// String returns the spec as given to Parse, without surrounding space.
func (s *specSchedule) String() string { return s.text }

// neverFires returns why the spec can match no wall time, or "". Every time
// field must allow a value (robfig accepts an empty list such as ","), and
// some calendar date must match the month and day fields. Every month starts
// on every weekday in some year, in leap years and in common years, so a
// month m can fire when any days[w] has a day that m has in a leap year.
func (s *specSchedule) neverFires() string {
	switch {
	case s.second == 0:
		return "the seconds field allows no value"
	case s.minute == 0:
		return "the minutes field allows no value"
	case s.hour == 0:
		return "the hours field allows no value"
	}
	for m := time.January; m <= time.December; m++ {
		if s.month&(1<<m) == 0 {
			continue
		}
		valid := dayBits(daysIn(m, 2000))
		for _, d := range s.days {
			if d&valid != 0 {
				return ""
			}
		}
	}
	return "no month it allows has a day it allows"
}

// Next returns the first activation strictly after t, in the schedule's
// location, following the daylight-saving rules in the package doc. The
// result is a whole second. It returns the zero time only if there is no
// activation within nine years of t, which never happens for a spec that
// Parse accepted.
//
// Cost: bounded by the nine-year search (see "Cost" in the package doc);
// no allocation. Figures: BenchmarkSpec_Next, bench/RESULTS.md in the
// repository, section 6.2.
func (s *specSchedule) Next(t time.Time) time.Time {
	// Whole seconds: wall times and zone offsets are whole seconds, so
	// the first candidate strictly after t is the next whole second.
	c := t.Unix() + 1

	// The smallest matching wall time at or after from, cached: the same
	// answer serves every from in [from, w].
	var cFrom, cW int64
	cached := false
	find := func(from int64) (int64, bool) {
		if cached && cFrom <= from && from <= cW {
			return cW, true
		}
		w, ok := s.nextWall(from)
		cFrom, cW, cached = from, w, ok
		return w, ok
	}

	for range maxSegments {
		ct := time.Unix(c, 0).In(s.loc)
		_, o := ct.Zone()
		off := int64(o)
		start, end := zoneBounds(ct)
		low := c + off // the wall time of c
		if !s.allHours && !start.IsZero() {
			ss := start.Unix()
			_, p := start.Add(-time.Second).Zone()
			prev := int64(p)
			switch {
			case prev > off:
				// The clock went back at start: wall times in
				// [ss+off, ss+prev) happened first before it.
				// Fixed-hour specs run them only then.
				low = max(low, ss+prev)
			case prev < off && ss > t.Unix():
				// The clock jumped forward at start (after t):
				// wall times in [ss+prev, ss+off) did not
				// happen. A match among them runs at start.
				if w, ok := find(ss + prev); ok && w < ss+off {
					return start
				}
			}
		}
		w, ok := find(low)
		if !ok {
			return time.Time{}
		}
		if end.IsZero() || w < end.Unix()+off {
			return time.Unix(w-off, 0).In(s.loc)
		}
		c = end.Unix()
	}
	return time.Time{}
}

// zoneBounds returns ct.ZoneBounds(), repaired so that start is not after ct
// and end is after it. Go's ZoneBounds breaks that in years served by a
// zone's TZ footer rule: during the last UTC day of a leap year (such as
// 2040-12-31) it returns an end before the instant (golang/go#81583). A bad
// bound is replaced by a scan for the nearest offset change within two days,
// or by a bound two days away with the same offset, which Next treats as an
// ordinary boundary.
func zoneBounds(ct time.Time) (start, end time.Time) {
	start, end = ct.ZoneBounds()
	if !end.IsZero() && !end.After(ct) {
		end = scanChange(ct, 1)
	}
	if start.After(ct) {
		start = scanChange(ct, -1)
	}
	return start, end
}

// scanChange returns the nearest instant in direction dir (1 forward, -1
// back) at which the offset of ct's location changes: for dir 1, the first
// second with another offset; for dir -1, the first second of ct's offset
// after the last second with another one. It probes every hour for two days
// and bisects to the second. With no change found it returns the instant two
// days away.
func scanChange(ct time.Time, dir int64) time.Time {
	loc := ct.Location()
	offAt := func(u int64) int {
		_, off := time.Unix(u, 0).In(loc).Zone()
		return off
	}
	c := ct.Unix()
	off := offAt(c)
	const hour, window = 3600, 48 * 3600
	for step := int64(hour); step <= window; step += hour {
		p := c + dir*step
		if offAt(p) == off {
			continue
		}
		// same: an instant with ct's offset; other: one without.
		same, other := p-dir*hour, p
		for (other-same)*dir > 1 {
			mid := same + (other-same)/2
			if offAt(mid) == off {
				same = mid
			} else {
				other = mid
			}
		}
		if dir > 0 {
			return time.Unix(other, 0).In(loc)
		}
		return time.Unix(same, 0).In(loc)
	}
	return time.Unix(c+dir*window, 0).In(loc)
}

// nextWall returns the smallest wall time at or after from that matches the
// spec, within searchYears. Wall times are counted in seconds like Unix time
// but read as a civil date and clock with no zone.
func (s *specSchedule) nextWall(from int64) (int64, bool) {
	f := time.Unix(from, 0).UTC()
	y, mo, d := f.Date()
	h, mi, sec := f.Clock()
	limit := y + searchYears
	for y <= limit {
		if s.month&(1<<mo) == 0 {
			m := nextBit(s.month, int(mo)+1)
			if m < 0 {
				y, mo = y+1, time.January
			} else {
				mo = time.Month(m)
			}
			d, h, mi, sec = 1, 0, 0, 0
			continue
		}
		nd := nextBit(s.dayMask(y, mo), d)
		if nd < 0 {
			if mo++; mo > time.December {
				y, mo = y+1, time.January
			}
			d, h, mi, sec = 1, 0, 0, 0
			continue
		}
		if nd != d {
			d, h, mi, sec = nd, 0, 0, 0
		}
		nh := nextBit(s.hour, h)
		if nh < 0 {
			d, h, mi, sec = d+1, 0, 0, 0
			continue
		}
		if nh != h {
			h, mi, sec = nh, 0, 0
		}
		nm := nextBit(s.minute, mi)
		if nm < 0 {
			h, mi, sec = h+1, 0, 0
			continue
		}
		if nm != mi {
			mi, sec = nm, 0
		}
		ns := nextBit(s.second, sec)
		if ns < 0 {
			mi, sec = mi+1, 0
			continue
		}
		return time.Date(y, mo, d, h, mi, ns, 0, time.UTC).Unix(), true
	}
	return 0, false
}

// dayMask returns the days of month mo of year y that match the day fields.
func (s *specSchedule) dayMask(y int, mo time.Month) uint64 {
	first := time.Date(y, mo, 1, 0, 0, 0, 0, time.UTC).Weekday()
	return s.days[first] & dayBits(daysIn(mo, y))
}

// dayBits returns bits 1..n.
func dayBits(n int) uint64 { return (1<<(n+1) - 1) &^ 1 }

// daysIn returns the number of days of month m in year y.
func daysIn(m time.Month, y int) int {
	switch m {
	case time.February:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case time.April, time.June, time.September, time.November:
		return 30
	}
	return 31
}

// nextBit returns the smallest set bit of mask at or above from, or -1.
func nextBit(mask uint64, from int) int {
	if from > 63 {
		return -1
	}
	m := mask >> from << from
	if m == 0 {
		return -1
	}
	return bits.TrailingZeros64(m)
}
