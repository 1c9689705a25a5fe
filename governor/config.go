package governor

import (
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"time"

	"github.com/jobkit/jobkit/internal/sat"
)

// StalePolicy says what the Governor does while its reading is stale: when the
// last sample failed (the Sampler returned an error or an invalid Reading, or
// panicked), or no sample has succeeded yet.
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
	// the Governor stops admitting work. It must be in (0, 100]. 100 turns the
	// CPU limit off: no reading then refuses work, and the CPUPercent of a
	// Weight is not checked. Below 100, a Weight asking for more CPU than
	// MaxCPUPercent could never be granted and is invalid. Defaults to 80.
	MaxCPUPercent float64

	// MaxMemoryPercent is the memory use, in percent of Reading.MemoryLimit,
	// above which the Governor stops admitting work. It must be in (0, 100].
	// 100 turns the limit off: no reading then refuses work for its memory
	// use, even one above the limit. The Memory of a Weight is bounded by the
	// memory available all the same. Defaults to 90.
	MaxMemoryPercent float64

	// MinAvailableMemory is the available memory, in bytes, below which the
	// Governor stops admitting work. Defaults to 0: no such limit.
	//
	// A reading whose MemoryLimit is not above MinAvailableMemory could never
	// meet it: the Governor counts such a sample as failed, with an error
	// wrapping ErrInvalidConfig that names both figures (Snapshot.Err), and
	// follows StalePolicy, rather than refusing work for good.
	MinAvailableMemory uint64

	// Hysteresis is how far a reading must fall back, as a fraction of the
	// limit it crossed, before admission resumes. With MaxCPUPercent 80 and
	// Hysteresis 0.1, admission stops above 80% and resumes at or below 72%;
	// with MinAvailableMemory 1 GiB it stops below 1 GiB and resumes at or
	// above 1.1 GiB, but never asks for more than halfway from
	// MinAvailableMemory to the memory limit, so that it can resume at all. It
	// must be below 1; a negative value turns hysteresis off. Defaults to 0.1.
	Hysteresis float64

	// Slots is the number of processing slots: how many units of work may hold
	// a Permit at once. It must be in [0, math.MaxInt32]. Defaults to
	// runtime.GOMAXPROCS(0) at the time of New.
	Slots int

	// Interval is the time between samples. A sample starts on each tick of
	// the interval unless one is still under way. When no sample has returned
	// for two Intervals, the reading is stale. It must be at least a
	// millisecond. Defaults to one second.
	Interval time.Duration

	// MaxHold bounds how long a blocked Acquire that is short of room (its
	// Weight fits the limits but not what the latest reading leaves) holds up
	// the work behind it, and how long work that fits may then pass it, before
	// it holds again (see Acquire). The phases change at samples only: a
	// MaxHold shorter than the Interval holds and passes for an Interval at a
	// time. It must not be negative. Defaults to five Intervals, at most the
	// longest Duration.
	MaxHold time.Duration

	// Sampler takes the readings. Defaults to a new SystemSampler.
	Sampler Sampler

	// StalePolicy says what to do while the reading is stale. Defaults to
	// StaleAdmit.
	StalePolicy StalePolicy

	// UsageWindow is the sliding window over which Usage sums slot-time; a
	// key idle for a whole window is forgotten (see Usage). It must not be
	// negative. Defaults to one minute.
	UsageWindow time.Duration

	// Logger receives the Governor's reports: a panicking Sampler (at level
	// Error, with the panic's value and stack), a NowFunc that faults on the
	// sampling goroutine (Error, see NowFunc), the first of a run of failed
	// samples and a late Sampler (Warn), and sampling that recovers (Info).
	// The sampling goroutine logs outside the Governor's lock, each record
	// through a goroutine of its own that it waits for: a handler that panics
	// (recovered) or calls runtime.Goexit loses its record but does not stop
	// sampling; a handler that blocks delays sampling. Defaults to
	// slog.Default() at the time of New.
	Logger *slog.Logger

	// NowFunc returns the current time, for usage accounting, sample ages and
	// the phases of MaxHold. Sampling and lateness (two Intervals without a
	// sample) are timed by the runtime's timers, not by NowFunc. Defaults to
	// time.Now.
	//
	// The sampling goroutine calls NowFunc to apply a sample, to mark the
	// reading late and to evict idle usage keys. A call there that panics or
	// calls runtime.Goexit loses what it was for (the sample is not applied,
	// the reading is marked late an Interval later, the keys are evicted at a
	// later tick) and is logged at level Error, a panic with its stack; a new
	// sampling goroutine takes over, at once, or at the next tick if one
	// already faulted since the last, so a NowFunc that always faults costs
	// a goroutine and a record an Interval. If applying the first sample
	// faults, Start returns as after a failed first sample: the reading is
	// stale until a sample is applied. Elsewhere NowFunc runs on the caller's
	// goroutine, where its panic is the caller's: in New, Snapshot, Usage,
	// and the Acquire, TryAcquire and Release of a Permit with a key.
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
	if c.MaxHold == 0 {
		c.MaxHold = times(5, c.Interval)
	}
	if c.Sampler == nil {
		c.Sampler = &SystemSampler{}
	}
	if c.UsageWindow == 0 {
		c.UsageWindow = time.Minute
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
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
	case c.MaxHold < 0:
		return c, fmt.Errorf("%w: MaxHold %v is negative", ErrInvalidConfig, c.MaxHold)
	case c.StalePolicy > StaleRefuse:
		return c, fmt.Errorf("%w: unknown %v", ErrInvalidConfig, c.StalePolicy)
	case c.UsageWindow < 0:
		return c, fmt.Errorf("%w: UsageWindow %v is negative", ErrInvalidConfig, c.UsageWindow)
	}
	return c, nil
}

// times returns n·d (n > 0, d ≥ 0), saturated at the longest Duration. An
// Interval of centuries (math.MaxInt64 for "sample once") made 5·Interval,
// the default MaxHold, wrap around to a negative value that New refused,
// and 2·Interval, the lateness of a sample, to -2ns: the reading went stale
// as soon as it was taken.
func times(n int64, d time.Duration) time.Duration {
	return time.Duration(sat.Mul(n, int64(d)))
}
