package governor

import (
	"fmt"
	"math"

	"github.com/jobkit/jobkit/internal/sat"
)

// checkReading returns an error wrapping ErrInvalidReading if r has a CPU
// figure that is not a finite number in range, or one wrapping
// ErrInvalidConfig if r's memory limit leaves no memory above
// MinAvailableMemory, so that under it the Governor could never admit.
func (g *Governor) checkReading(r Reading) error {
	switch {
	case !(r.CPUPercent >= 0 && r.CPUPercent <= 100): // NaN too
		return fmt.Errorf("%w: CPUPercent %v is not in [0, 100]", ErrInvalidReading, r.CPUPercent)
	case !(r.CPUCores >= 0 && r.CPUCores <= math.MaxFloat64):
		return fmt.Errorf("%w: CPUCores %v is not a finite number of at least 0", ErrInvalidReading, r.CPUCores)
	case r.MemoryLimit > 0 && g.cfg.MinAvailableMemory >= r.MemoryLimit:
		return fmt.Errorf("%w: MinAvailableMemory %s is not below the memory limit %s (%v): nothing could be admitted",
			ErrInvalidConfig, bytesString(g.cfg.MinAvailableMemory), bytesString(r.MemoryLimit), r.MemorySource)
	}
	return nil
}

// judgeLocked updates the over-limit flags from a new, checked reading: a
// limit is crossed above its maximum and cleared only at or below its low
// watermark. A limit of 100% is off: it is never crossed.
func (g *Governor) judgeLocked(r Reading) {
	c, w := &g.cfg, &g.watermarks
	g.cpuOver = c.MaxCPUPercent < 100 && r.CPUPercent > pick(g.cpuOver, w.cpu, c.MaxCPUPercent)
	if r.MemoryLimit == 0 {
		g.memOver, g.availOver = false, false
		return
	}
	g.memOver = c.MaxMemoryPercent < 100 && memoryAbove(r, pick(g.memOver, w.memory, c.MaxMemoryPercent))
	g.availOver = r.MemoryAvailable < pick(g.availOver, w.availableOf(r.MemoryLimit, c.MinAvailableMemory), c.MinAvailableMemory)
}

// memoryAbove reports whether r's memory use is above pct percent of its
// limit. It compares the bytes used with the bytes pct allows, as
// roomsLocked computes them, rather than r.MemoryPercent with pct: the
// ratio rounds (11 bytes of 20 are 55.00000000000001%), which refused work
// exactly at the limit, and at a watermark kept it refused.
func memoryAbove(r Reading, pct float64) bool {
	return float64(r.MemoryUsed) > float64(r.MemoryLimit)*pct/100
}

// watermarks are the levels at which a crossed limit clears.
type watermarks struct {
	cpu, memory float64 // percent
	available   uint64  // bytes
}

// newWatermarks returns the watermarks of c, rounded so that a limit of 80%
// with a hysteresis of 0.1 clears at 72%, not at 71.99999999999999%.
func newWatermarks(c *Config) watermarks {
	round := func(x float64) float64 { return math.Round(x*1e9) / 1e9 }
	w := watermarks{
		cpu:       round(c.MaxCPUPercent * (1 - c.Hysteresis)),
		memory:    round(c.MaxMemoryPercent * (1 - c.Hysteresis)),
		available: math.MaxUint64,
	}
	if avail := math.Round(float64(c.MinAvailableMemory) * (1 + c.Hysteresis)); avail < math.MaxUint64 {
		w.available = uint64(avail)
	}
	return w
}

// availableOf returns the available memory at which a crossed
// MinAvailableMemory (minAvail, below limit) clears under a memory limit of
// limit: the watermark, but no more than halfway from minAvail to the limit,
// so that a watermark above the limit does not stop admission for good.
func (w *watermarks) availableOf(limit, minAvail uint64) uint64 {
	return min(w.available, minAvail+(limit-minAvail)/2)
}

func pick[T any](cond bool, yes, no T) T {
	if cond {
		return yes
	}
	return no
}

// updateLocked publishes the admission decision and the rooms for weights to
// the atomics TryAcquire reads.
func (g *Governor) updateLocked() {
	refuse := g.isStopped
	memRoom, cpuRoom := int64(math.MaxInt64), int64(math.MaxInt64)
	switch {
	case g.stale && g.cfg.StalePolicy == StaleRefuse:
		refuse = true
	case g.stale: // StaleAdmit: slots alone
	default:
		refuse = refuse || g.cpuOver || g.memOver || g.availOver
		memRoom, cpuRoom = g.roomsLocked()
	}
	g.memRoom.Store(memRoom)
	g.cpuRoom.Store(cpuRoom)
	g.roomsGen++
	if refuse != g.refusing {
		g.refusing = refuse
		if refuse {
			g.gate.Add(gateRefuse)
		} else {
			g.gate.Add(-gateRefuse)
		}
	}
}

// roomsLocked returns the memory (bytes) and CPU (thousandths of a
// percentage point) the latest reading leaves for Weights: below the limits
// that are on, and never more memory than is available.
func (g *Governor) roomsLocked() (mem, cpu int64) {
	c, r := &g.cfg, &g.reading
	mem, cpu = math.MaxInt64, math.MaxInt64
	if c.MaxCPUPercent < 100 {
		cpu = int64((c.MaxCPUPercent - r.CPUPercent) * 1000)
	}
	if r.MemoryLimit > 0 {
		room := float64(r.MemoryAvailable) - float64(c.MinAvailableMemory)
		if c.MaxMemoryPercent < 100 {
			room = min(room, float64(r.MemoryLimit)*c.MaxMemoryPercent/100-float64(r.MemoryUsed))
		}
		// Saturated, as memCeilOf saturates the ceiling: rooms of 2⁶³
		// bytes or more (a memory limit of math.MaxUint64 for none) are
		// math.MaxInt64, so that a Weight of math.MaxInt64 bytes, valid
		// under such a limit, fits the room it leaves.
		mem = sat.FromFloat(room)
	}
	return mem, cpu
}
