package governor

import (
	"fmt"
	"math"
	"runtime"
	"time"
)

// StalePolicy says what the Governor does while its reading is stale: when the
// last call to the Sampler failed, or no sample has succeeded yet.
type StalePolicy uint8

const (
	// StaleAdmit admits work on slots alone while the reading is stale: CPU and
	// memory limits, and the CPU and memory of a Weight, are not checked. A
	// broken sampler then slows nothing down; the slots still bound the work.
	StaleAdmit StalePolicy = iota
	// StaleRefuse admits nothing while the reading is stale. Blocked Acquire
	// calls wait for the next good sample.
	StaleRefuse
)

// String returns "admit" or "refuse".
func (p StalePolicy) String() string {
	switch p {
	case StaleAdmit:
		return "admit"
	case StaleRefuse:
		return "refuse"
	default:
		return fmt.Sprintf("StalePolicy(%d)", uint8(p))
	}
}

// Config configures a Governor. The zero Config is valid: every field has a
// default. Nothing can be changed after New.
type Config struct {
	// MaxCPUPercent is the CPU use, in percent of Reading.CPUCores, above which
	// the Governor stops admitting work. It must be in (0, 100]; 100 turns the
	// CPU limit off. Defaults to 80.
	MaxCPUPercent float64

	// MaxMemoryPercent is the memory use, in percent of Reading.MemoryLimit,
	// above which the Governor stops admitting work. It must be in (0, 100];
	// 100 turns the limit off. Defaults to 90.
	MaxMemoryPercent float64

	// MinAvailableMemory is the available memory, in bytes, below which the
	// Governor stops admitting work. Defaults to 0: no such limit.
	MinAvailableMemory uint64

	// Hysteresis is how far a reading must fall back, as a fraction of the
	// limit it crossed, before admission resumes. With MaxCPUPercent 80 and
	// Hysteresis 0.1, admission stops above 80% and resumes at or below 72%;
	// with MinAvailableMemory 1 GiB it stops below 1 GiB and resumes at or
	// above 1.1 GiB. It must be below 1; a negative value turns hysteresis off.
	// Defaults to 0.1.
	Hysteresis float64

	// Slots is the number of processing slots: how many units of work may hold
	// a Permit at once. It must be in [0, math.MaxInt32]. Defaults to
	// runtime.GOMAXPROCS(0) at the time of New.
	Slots int

	// Interval is the time between samples. It must be at least a millisecond.
	// Defaults to one second.
	Interval time.Duration

	// Sampler takes the readings. Defaults to a new SystemSampler.
	Sampler Sampler

	// StalePolicy says what to do while the reading is stale. Defaults to
	// StaleAdmit.
	StalePolicy StalePolicy

	// UsageWindow is the sliding window over which Usage sums slot-time. It
	// must not be negative. Defaults to one minute.
	UsageWindow time.Duration

	// NowFunc returns the current time, for usage accounting and sample ages.
	// Defaults to time.Now.
	NowFunc func() time.Time
}

// withDefaults returns c with every unset field set to its default, or an error
// wrapping ErrInvalidConfig if a field is out of range.
func (c Config) withDefaults() (Config, error) {
	if c.MaxCPUPercent == 0 {
		c.MaxCPUPercent = 80
	}
	if c.MaxMemoryPercent == 0 {
		c.MaxMemoryPercent = 90
	}
	switch {
	case c.Hysteresis == 0:
		c.Hysteresis = 0.1
	case c.Hysteresis < 0:
		c.Hysteresis = 0
	}
	if c.Slots == 0 {
		c.Slots = runtime.GOMAXPROCS(0)
	}
	if c.Interval == 0 {
		c.Interval = time.Second
	}
	if c.Sampler == nil {
		c.Sampler = &SystemSampler{}
	}
	if c.UsageWindow == 0 {
		c.UsageWindow = time.Minute
	}
	if c.NowFunc == nil {
		c.NowFunc = time.Now
	}

	switch {
	case !(c.MaxCPUPercent > 0 && c.MaxCPUPercent <= 100):
		return c, fmt.Errorf("%w: MaxCPUPercent %v is not in (0, 100]", ErrInvalidConfig, c.MaxCPUPercent)
	case !(c.MaxMemoryPercent > 0 && c.MaxMemoryPercent <= 100):
		return c, fmt.Errorf("%w: MaxMemoryPercent %v is not in (0, 100]", ErrInvalidConfig, c.MaxMemoryPercent)
	case !(c.Hysteresis < 1): // NaN too
		return c, fmt.Errorf("%w: Hysteresis %v is not below 1", ErrInvalidConfig, c.Hysteresis)
	case c.Slots < 0 || c.Slots > math.MaxInt32:
		return c, fmt.Errorf("%w: Slots %d is not in [0, %d]", ErrInvalidConfig, c.Slots, math.MaxInt32)
	case c.Interval < time.Millisecond:
		return c, fmt.Errorf("%w: Interval %v is below 1ms", ErrInvalidConfig, c.Interval)
	case c.StalePolicy > StaleRefuse:
		return c, fmt.Errorf("%w: unknown %v", ErrInvalidConfig, c.StalePolicy)
	case c.UsageWindow < 0:
		return c, fmt.Errorf("%w: UsageWindow %v is negative", ErrInvalidConfig, c.UsageWindow)
	}
	return c, nil
}
