package cron

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// MaxRunEach is the largest bound [RunEach] accepts.
const MaxRunEach = 10000

// Missed is a policy for activations that passed while a job could not run
// (the process was down, or the previous run was still going). The zero value
// is [Skip]. Build policies with [Skip], [RunOnce] and [RunEach]; a Missed is
// a small value, safe to copy and compare.
type Missed struct {
	n int // the latest n missed activations run; 0 = skip
}

var (
	// Skip runs none of the missed activations: the job waits for its next
	// time. It is the zero Missed.
	Skip = Missed{}

	// RunOnce runs the latest missed activation once, however many were
	// missed.
	RunOnce = Missed{n: 1}
)

// RunEach returns the policy that runs the latest n missed activations,
// oldest first. n must be in 1..[MaxRunEach]; otherwise RunEach returns an
// error wrapping [ErrInvalidBound]. RunEach(1) equals [RunOnce].
func RunEach(n int) (Missed, error) {
	if n < 1 || n > MaxRunEach {
		return Skip, fmt.Errorf("%w: RunEach(%d): want 1..%d", ErrInvalidBound, n, MaxRunEach)
	}
	return Missed{n: n}, nil
}

// String returns "Skip", "RunOnce" or "RunEach(n)".
func (m Missed) String() string {
	switch m.n {
	case 0:
		return "Skip"
	case 1:
		return "RunOnce"
	}
	return fmt.Sprintf("RunEach(%d)", m.n)
}

// Due says what a job should run after its previous run settled: the missed
// activations to run now under policy m, and the next activation to wait for.
//
// last is the scheduled time of the job's most recent run, or the time it was
// registered before its first run; now is the current time. An activation a
// is missed when last < a < now. runs holds the latest ones the policy keeps,
// oldest first (nil for Skip, or when none were missed). next is the first
// activation after last that is not before now: when it equals now the job is
// due at once, so an activation that falls exactly on now is never lost, even
// under Skip. next is the zero time when s has no further activation. If now
// is not after last (a clock that went back), nothing is missed and next is
// s.Next(last).
//
// Cost: Due never enumerates the missed activations. It finds the latest
// one before a time with a galloping search back from that time and a
// bisection, using only s.Next, so the number of Next calls grows with the
// logarithm of now-last and not with the number of missed activations:
// 3 in all for a job that fires every second and was down for a year, under
// RunOnce (4 when now falls on an activation); 2 more per extra run under RunEach for a regular schedule; a few
// dozen for a rare one (0 0 29 2 *). The worst case, for a schedule that
// fires in bursts, is about 64 gallop steps and 64 halvings of at most 9
// calls each per run. See TestDueBoundedWork and BenchmarkDue.
//
// Due panics if s is nil. It is safe for concurrent use if s is.
func Due(s Schedule, last, now time.Time, m Missed) (runs []time.Time, next time.Time) {
	if s == nil {
		panic("cron: Due with a nil Schedule")
	}
	last, now = last.Round(0), now.Round(0)
	from := last
	if now.Add(-1).After(last) {
		from = now.Add(-1) // Next(now-1ns) is not before now
	}
	next, _ = nextOf(s, from)
	if m.n == 0 || !now.After(last) {
		return nil, next
	}
	hint := time.Second
	y := now
	for len(runs) < m.n {
		a, ok := latestBefore(s, last, y, hint)
		if !ok {
			break
		}
		runs = append(runs, a)
		// Past the previous gap: one probe when the schedule is regular.
		if g := y.Sub(a); g < math.MaxInt64/2 {
			hint = g + g/2
		}
		y = a
	}
	slices.Reverse(runs)
	return runs, next
}

// walkSteps is how many activations latestBefore steps through with Next
// before it bisects.
const walkSteps = 8

// latestBefore returns the latest activation a of s with last < a < y. hint
// is a guess of the distance from y back to it.
func latestBefore(s Schedule, last, y time.Time, hint time.Duration) (time.Time, bool) {
	// Gallop back from y until a window (lo, y) holds an activation a.
	// Invariants from here on: lo < a = Next(lo) < y; Next(hi) >= y (or
	// none), so the latest activation before y is in [a, hi].
	lo, hi := last, y
	var a time.Time
	found := false
	for d := max(hint, 1); ; d *= 2 {
		x := y.Add(-d)
		if !x.After(last) {
			break
		}
		if b, ok := nextOf(s, x); ok && b.Before(y) {
			lo, a, found = x, b, true
			break
		}
		hi = x
		if d > math.MaxInt64/2 {
			break
		}
	}
	if !found {
		b, ok := nextOf(s, last)
		if !ok || !b.Before(y) {
			return time.Time{}, false
		}
		a = b
	}
	// Walk forward a few activations; when the window holds more, halve
	// it and walk again. Each round halves hi-lo at least once, so there
	// are at most 64 rounds for a monotone s; the cap guards the others.
	for range 128 {
		for range walkSteps {
			b, ok := nextOf(s, a)
			if !ok || !b.Before(y) {
				return a, true
			}
			a = b
		}
		if !a.Before(hi) {
			return a, true // only for a non-monotone s
		}
		lo = a
		for {
			span := hi.Sub(lo)
			if span <= 1 {
				// Next(lo) is hi: the latest. The walk returns it.
				b, ok := nextOf(s, lo)
				if !ok || !b.Before(y) {
					return a, true // only for a non-monotone s
				}
				a = b
				break
			}
			mid := lo.Add(span / 2)
			if b, ok := nextOf(s, mid); ok && b.Before(y) {
				lo, a = mid, b
				break
			}
			hi = mid
		}
	}
	return a, true
}
