package governor

import (
	"container/list"
	"fmt"
	"math"
	"time"

	"github.com/jobkit/jobkit/internal/sat"
)

// waiter is one blocked Acquire call.
type waiter struct {
	cost  cost
	since time.Time     // when the last sample before it arrived was applied; zero if none
	ready chan struct{} // closed when granted (err nil) or failed
	err   error         // written before ready is closed
	// roomsGen is Governor.roomsGen when the waiter was granted: its
	// reservation is still in the rooms while they have not been set
	// afresh since.
	roomsGen uint64

	// holding says whether the waiter, when short of room, holds up those
	// behind it: in the first Config.MaxHold after it arrived, in the third,
	// and so on. Updated on every sample (phaseLocked).
	holding bool
	// phase is the count of MaxHolds ended since since when holding last
	// changed.
	phase int64
}

func (w *waiter) settle(err error) {
	w.err = err
	close(w.ready)
}

// fit says whether a cost fits, or why not.
type fit uint8

const (
	fitOK      fit = iota
	fitRefused     // the reading or Stop refuses all work
	fitRoom        // short of memory or CPU room
	fitSlots       // short of free slots
)

// takeLocked is take for the waiter queue, which it ignores: it takes c or
// says why c does not fit.
func (g *Governor) takeLocked(c cost) fit {
	if g.gate.Load()&gateRefuse != 0 {
		return fitRefused
	}
	if g.memRoom.Load() < c.mem || g.cpuRoom.Load() < c.cpu {
		return fitRoom
	}
	if g.free.Add(-c.slots) < 0 {
		g.free.Add(c.slots)
		if !g.flushCached() {
			return fitSlots
		}
		if g.free.Add(-c.slots) < 0 {
			g.free.Add(c.slots)
			return fitSlots
		}
	}
	if (c.mem != 0 || c.cpu != 0) && !g.reserve(c) { // raced with TryAcquire
		g.free.Add(c.slots)
		return fitRoom
	}
	return fitOK
}

// grantLocked grants the waiters that fit, in order, until one holds up the
// rest: one short of slots, or one short of room while holding. It passes
// over waiters short of room that are not holding. Then it publishes whether
// a waiter holds up later work.
func (g *Governor) grantLocked() {
	hold := false
	for e := g.waiters.Front(); e != nil && !hold; {
		w, next := e.Value.(*waiter), e.Next()
		switch g.takeLocked(w.cost) {
		case fitOK:
			w.roomsGen = g.roomsGen
			g.dequeueLocked(e).settle(nil)
		case fitRoom:
			hold = w.holding
		default:
			hold = true
		}
		e = next
	}
	g.setHoldLocked(hold)
}

// setHoldLocked publishes whether a waiter holds up later work.
func (g *Governor) setHoldLocked(hold bool) {
	if hold == g.holding {
		return
	}
	g.holding = hold
	if hold {
		g.gate.Add(gateHold)
	} else {
		g.gate.Add(-gateHold)
	}
}

// phaseLocked sets each waiter's holding phase for the time now, the time of
// a sample. A waiter's phases count from the sample before it arrived (or
// the first after, if there was none), so that Acquire needs no clock read.
//
// A sample that finds that one or more of the MaxHolds counted from since
// have ended since the last change flips the phase, once, so that a phase
// lasts at most MaxHold and the wait for the next sample. Reading the phase
// off the clock instead, as the parity of the MaxHolds ended, aliased when
// MaxHold is shorter than the Interval: samples a multiple of 2·MaxHold
// apart all found it even, and the waiter held up the work behind it for
// ever. With samples an Interval apart and a MaxHold of at least one
// Interval, the two agree. A NowFunc that steps back restarts the count at
// the sample that finds it back.
func (g *Governor) phaseLocked(now time.Time) {
	for e := g.waiters.Front(); e != nil; e = e.Next() {
		w := e.Value.(*waiter)
		if w.since.IsZero() {
			w.since = now
		}
		switch k := int64(now.Sub(w.since) / g.cfg.MaxHold); {
		case k > w.phase:
			w.phase, w.holding = k, !w.holding
		case k < w.phase || now.Before(w.since):
			// NowFunc stepped back: the count starts again from now,
			// in the phase the waiter is in, which so still ends a
			// MaxHold later, not once NowFunc is past since again.
			w.since, w.phase = now, 0
		}
	}
}

// dropInvalidLocked fails the waiters whose memory no longer fits under the
// memory limit of the latest reading.
func (g *Governor) dropInvalidLocked() {
	ceil := g.memCeil.Load()
	for e := g.waiters.Front(); e != nil; {
		w, next := e.Value.(*waiter), e.Next()
		if w.cost.mem > ceil {
			g.dequeueLocked(e).settle(fmt.Errorf("%w: Memory %s is more than the limits allow (%s) under the memory limit %s",
				ErrInvalidWeight, bytesString(uint64(w.cost.mem)), bytesString(uint64(ceil)), bytesString(g.reading.MemoryLimit)))
		}
		e = next
	}
}

// memCeilOf returns the most memory a Weight may ask for under r's memory
// limit: what the limits leave when nothing is in use.
func (g *Governor) memCeilOf(r Reading) int64 {
	c := &g.cfg
	if r.MemoryLimit == 0 {
		return math.MaxInt64
	}
	ceil := float64(r.MemoryLimit - c.MinAvailableMemory) // checkReading saw MinAvailableMemory below the limit
	if c.MaxMemoryPercent < 100 {
		ceil = min(ceil, float64(r.MemoryLimit)*c.MaxMemoryPercent/100)
	}
	return sat.FromFloat(ceil) // as roomsLocked does the room, which must reach it
}

// dequeueLocked removes e from the queue and returns its waiter.
func (g *Governor) dequeueLocked(e *list.Element) *waiter {
	g.waiters.Remove(e)
	g.gate.Add(-gateWaiter)
	return e.Value.(*waiter)
}
