package governor

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Snapshot is the state of a Governor at one moment, for operators: the
// latest good reading, how old it is, and how admission stands.
type Snapshot struct {
	// Reading is the latest good reading: zero if there has been none.
	Reading
	// SampledAt is when Reading was taken: zero if there has been none.
	SampledAt time.Time
	// Age is the time since SampledAt.
	Age time.Duration
	// Stale reports that there is no good reading yet, that the last sample
	// failed, or that no sample has returned for two intervals. Err then says
	// why: the Sampler's error, an invalid reading (ErrInvalidReading,
	// ErrInvalidConfig), a *PanicError, ErrSamplerGoexit or ErrSamplerLate.
	Stale bool
	Err   error
	// Admitting reports whether the Governor admits work at all now; work
	// still needs a free slot and room for its Weight.
	Admitting bool
	// CPUOver and MemoryOver report the limits the reading is over (with
	// hysteresis: they stay set until the reading falls below the low
	// watermark). MemoryOver covers both MaxMemoryPercent and MinAvailableMemory.
	CPUOver, MemoryOver bool
	// Slots is the number of processing slots; SlotsInUse are held by Permits.
	Slots, SlotsInUse int
	// Waiting is the number of blocked Acquire calls.
	Waiting int
	// Keys is the number of usage keys the Governor keeps a record for: those
	// that have held slots within the last Config.UsageWindow (see Usage).
	Keys int
}

// Snapshot returns the current state of the Governor.
func (g *Governor) Snapshot() Snapshot {
	if g.table == nil {
		return Snapshot{Stale: true, Err: errNotMade}
	}
	now := g.cfg.NowFunc()
	g.mu.Lock()
	defer g.mu.Unlock()
	s := Snapshot{
		Reading:    g.reading,
		SampledAt:  g.sampledAt,
		Stale:      g.stale,
		Err:        g.lastErr,
		Admitting:  !g.refusing,
		CPUOver:    g.cpuOver,
		MemoryOver: g.memOver || g.availOver,
		Slots:      g.cfg.Slots,
		SlotsInUse: g.cfg.Slots - int(min(max(g.free.Load()+g.cachedSlots(), 0), int64(g.cfg.Slots))),
		Waiting:    g.waiters.Len(),
		Keys:       int(g.usage.count.Load()),
	}
	if !s.SampledAt.IsZero() {
		s.Age = now.Sub(s.SampledAt)
	}
	return s
}

// String formats the snapshot on one line, for logs and operator tools:
//
//	admitting; cpu 12.5% of 2 cores (cgroup v2); memory 1.2GiB used, 824MiB available of 2GiB (cgroup v2); go heap 35MiB, GOMEMLIMIT none; slots 3/8, 0 waiting; sampled 420ms ago
func (s Snapshot) String() string {
	var b strings.Builder
	switch {
	case s.Admitting:
		b.WriteString("admitting")
	default:
		b.WriteString("refusing")
		if s.CPUOver {
			b.WriteString(" (cpu over)")
		}
		if s.MemoryOver {
			b.WriteString(" (memory over)")
		}
	}
	fmt.Fprintf(&b, "; cpu %.1f%% of %g cores (%v)", s.CPUPercent, s.CPUCores, s.CPUSource)
	fmt.Fprintf(&b, "; memory %s used, %s available of %s (%v)",
		bytesString(s.MemoryUsed), bytesString(s.MemoryAvailable), bytesString(s.MemoryLimit), s.MemorySource)
	limit := "none"
	if s.GoMemLimit != 0 && s.GoMemLimit != math.MaxInt64 {
		limit = bytesString(s.GoMemLimit)
	}
	fmt.Fprintf(&b, "; go heap %s, GOMEMLIMIT %s", bytesString(s.GoHeap), limit)
	fmt.Fprintf(&b, "; slots %d/%d, %d waiting", s.SlotsInUse, s.Slots, s.Waiting)
	switch {
	case s.SampledAt.IsZero():
		b.WriteString("; no sample yet")
	default:
		fmt.Fprintf(&b, "; sampled %v ago", s.Age.Round(time.Millisecond))
	}
	if s.Stale {
		b.WriteString("; stale")
		if s.Err != nil {
			fmt.Fprintf(&b, ": %v", s.Err)
		}
	}
	return b.String()
}

// bytesString formats n bytes with a binary unit: 512B, 1.5KiB, 2GiB.
func bytesString(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%dB", n)
	}
	// The unit is chosen by the value as printed, rounded: 1023.99KiB is
	// 1MiB, not 1024KiB.
	v, i := float64(n), -1
	for v >= unit-0.5 && i < 5 {
		v /= unit
		i++
	}
	if v >= 999.5 { // %.3g would print 1010 as 1.01e+03, and 999.7 as 1e+03
		return fmt.Sprintf("%.0f%ciB", v, "KMGTPE"[i])
	}
	return fmt.Sprintf("%.3g%ciB", v, "KMGTPE"[i])
}
