package sched

import (
	"fmt"
	"log/slog"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/jobkit/jobkit/governor"
)

// Config configures a Scheduler. The zero Config is valid: every field has
// a default. Nothing can be changed after New.
type Config struct {
	// Loops is the number of scheduling loops: goroutines that pick a
	// queue, ask the governor and take entries for the workers. A few are
	// plenty; they do no work of the jobs. Defaults to 2; at most 64.
	Loops int

	// Workers is the number of processing workers: goroutines that run
	// handlers, one batch at a time. Defaults to 8 × GOMAXPROCS at New;
	// at most 1<<20.
	Workers int

	// Governor admits each batch: a scheduling loop asks it for a permit
	// charged to the queue's name before it takes entries, and the permit
	// is held until the batch is done. The scheduler neither starts nor
	// stops it. Defaults to a governor of the scheduler's own that admits on
	// slots alone, one per worker.
	Governor *governor.Governor

	// Logger receives the scheduler's warnings (a failing backend, an
	// abandoned run). Defaults to slog.Default(). Its handler is called on
	// a goroutine of its own, so that one that panics or calls
	// runtime.Goexit loses its record and does not end the goroutine that
	// logged it; one that hangs holds that goroutine, and no lock.
	Logger *slog.Logger

	// Metrics, if not nil, receives client-go's seven workqueue metrics for
	// every queue. When it is nil nothing is measured and nothing runs for
	// metrics.
	Metrics MetricsProvider

	// Clock tells the time and makes timers. Defaults to the system clock
	// (which testing/synctest fakes inside a bubble). A Clock that panics,
	// or whose timer does (or whose NewTimer returns nil), or that ends
	// the goroutine calling it (runtime.Goexit), takes nothing down: the
	// fault is logged with its stack, and from then on the scheduler uses
	// the system clock (see "Faults" in the package doc). Its goroutines
	// that wait on a timer of the broken clock wake and re-arm on the
	// system clock; a timer of Scheduler.Clock used elsewhere (recovery's
	// reaper) moves at its next Reset, Stop or C.
	Clock Clock

	// Retention is how long final entries are kept, for queues that do not
	// say. Defaults to DefaultRetention.
	Retention *Retention
}

// maxLoops and maxWorkers bound Config.Loops and Config.Workers.
const (
	maxLoops   = 64
	maxWorkers = 1 << 20
)

func (c Config) withDefaults() (Config, error) {
	switch {
	case c.Loops < 0 || c.Loops > maxLoops:
		return c, fmt.Errorf("%w: Loops %d not in [0, %d]", ErrInvalid, c.Loops, maxLoops)
	case c.Workers < 0 || c.Workers > maxWorkers:
		return c, fmt.Errorf("%w: Workers %d not in [0, %d]", ErrInvalid, c.Workers, maxWorkers)
	}
	if c.Loops == 0 {
		c.Loops = 2
	}
	if c.Workers == 0 {
		c.Workers = 8 * runtime.GOMAXPROCS(0)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	c.Logger = guardLogger(c.Logger)
	if c.Clock == nil {
		c.Clock = new(systemClock)
	} else {
		c.Clock = newGuardedClock(c.Clock, c.Logger)
	}
	r := DefaultRetention
	if c.Retention != nil {
		r = *c.Retention // a copy, validated: the caller's may change after New
		if err := r.validate(); err != nil {
			return c, err
		}
	}
	c.Retention = &r
	return c, nil
}

func (r *Retention) validate() error {
	if r.Succeeded < 0 || r.Failed < 0 || r.Cancelled < 0 || r.MaxSucceeded < 0 || r.MaxFailed < 0 || r.MaxCancelled < 0 {
		return fmt.Errorf("%w: negative retention %+v", ErrInvalid, *r)
	}
	return nil
}

// Clock tells the time and makes timers, so that tests can drive time.
// Inside a testing/synctest bubble the system clock is already fake.
type Clock interface {
	Now() time.Time
	// NewTimer returns a stopped timer.
	NewTimer() Timer
}

// Timer is a timer of a Clock, like time.Timer.
type Timer interface {
	// C returns the channel the timer sends on when it fires.
	C() <-chan time.Time
	// Reset arms the timer to fire after d.
	Reset(d time.Duration)
	// Stop disarms it.
	Stop()
}

// systemClock is the real clock, the default. Its Now reads only the
// monotonic clock (half the cost of time.Now on the virtual machines
// measured) and takes the wall time from an anchor read with time.Now,
// renewed once it is a second old: a step of the wall clock shows within a
// second. Its times carry monotonic readings, so they compare exactly with
// those of time.Now. Each scheduler has its own, so that one made in a
// testing/synctest bubble keeps to the bubble's time.
type systemClock struct{ anchor atomic.Pointer[time.Time] }

func (c *systemClock) Now() time.Time {
	if a := c.anchor.Load(); a != nil {
		if d := time.Since(*a); d >= 0 && d < time.Second {
			return a.Add(d)
		}
	}
	t := time.Now()
	c.anchor.Store(&t)
	return t
}

func (*systemClock) NewTimer() Timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return sysTimer{t}
}

type sysTimer struct{ t *time.Timer }

func (t sysTimer) C() <-chan time.Time   { return t.t.C }
func (t sysTimer) Reset(d time.Duration) { t.t.Reset(d) }
func (t sysTimer) Stop()                 { t.t.Stop() }
