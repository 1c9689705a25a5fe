package governor

import (
	"container/list"
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// The gate word holds what every TryAcquire reads and few calls write.
const (
	gateRefuse = 1 // set while the reading (or Stop) refuses work
	gateWaiter = 2 // the bits above count blocked Acquire calls
)

// Governor admits work while the process has CPU, memory and a processing
// slot to spare. A background goroutine, started by Start, samples the
// resources every Config.Interval; TryAcquire and Acquire hand out Permits
// against the latest sample and the free slots.
//
// A Governor is created by New; the zero Governor is not usable. All its
// methods are safe for concurrent use. The Release of a Permit happens before
// the TryAcquire or Acquire that is granted its slots returns.
type Governor struct {
	cfg        Config
	watermarks watermarks

	// gate holds gateRefuse and the number of waiters; free is the number of
	// free slots, negative for a moment while a take that failed undoes
	// itself. They sit on separate cache lines: free is written by every
	// grant and release, gate seldom.
	gate atomic.Int64
	_    [64]byte
	free atomic.Int64
	_    [64]byte
	// memRoom and cpuRoom are the memory (bytes) and CPU (thousandths of a
	// percentage point) that Weights may still reserve until the next sample.
	memRoom atomic.Int64
	cpuRoom atomic.Int64

	permits sync.Pool // of *permit
	usage   usage

	// life serialises Start and Stop and guards cancel and stopped.
	life    sync.Mutex
	cancel  context.CancelCauseFunc // cancels the sampling loop's context, which it owns
	stopped chan struct{}           // closed when the sampling loop has returned

	// mu guards the fields below it and the waiter queue.
	mu        sync.Mutex
	waiters   list.List // of *waiter, in arrival order
	isStopped bool
	refusing  bool // mirrors gateRefuse
	reading   Reading
	sampledAt time.Time
	stale     bool  // no good sample yet, or the last one failed
	lastErr   error // the sampler's last error, while stale
	cpuOver   bool  // hysteresis state of each limit
	memOver   bool
	availOver bool
}

// New returns a Governor configured by cfg, or an error wrapping
// ErrInvalidConfig. It starts no goroutine: until Start, the Governor has no
// reading and admits according to Config.StalePolicy.
func New(cfg Config) (*Governor, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	g := &Governor{cfg: cfg, watermarks: newWatermarks(&cfg), stale: true}
	g.free.Store(int64(cfg.Slots))
	g.permits.New = func() any { return &permit{g: g} }
	g.usage.init(cfg.UsageWindow, cfg.NowFunc)
	g.mu.Lock()
	g.updateLocked()
	g.mu.Unlock()
	return g, nil
}

// Start starts the goroutine that samples the resources, at once and then
// every Config.Interval until Stop, and waits for the first sample so that
// admission has a reading from the start. If ctx is done first, Start returns
// ctx's error; sampling goes on until Stop all the same. Cancelling ctx after
// Start returns does not stop sampling. Start returns ErrStopped after Stop;
// calling it again while running does nothing.
func (g *Governor) Start(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	g.life.Lock()
	g.mu.Lock()
	isStopped := g.isStopped
	g.mu.Unlock()
	switch {
	case isStopped:
		g.life.Unlock()
		return ErrStopped
	case g.stopped != nil:
		g.life.Unlock()
		return nil
	}
	loopCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	first := make(chan struct{})
	g.cancel, g.stopped = cancel, make(chan struct{})
	go g.loop(loopCtx, first, g.stopped)
	g.life.Unlock()

	select {
	case <-first:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Stop stops sampling and waits until the sampling goroutine has returned, or
// until ctx is done, returning ctx's error. From the first call on, TryAcquire
// reports false and Acquire, including calls blocked in it, returns
// ErrStopped; Permits already granted may still be released. Stop is
// idempotent and safe without Start.
func (g *Governor) Stop(ctx context.Context) error {
	g.life.Lock()
	g.mu.Lock()
	if !g.isStopped {
		g.isStopped = true
		g.updateLocked()
		for e := g.waiters.Front(); e != nil; e = g.waiters.Front() {
			g.dequeueLocked(e).settle(ErrStopped)
		}
	}
	g.mu.Unlock()
	cancel, stopped := g.cancel, g.stopped
	g.life.Unlock()

	if stopped == nil {
		return nil
	}
	cancel(ErrStopped)
	select {
	case <-stopped:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// loop samples at once, closes first, samples every interval until ctx is
// cancelled, then closes stopped.
func (g *Governor) loop(ctx context.Context, first, stopped chan<- struct{}) {
	defer close(stopped)
	g.apply(g.cfg.Sampler.Sample(ctx))
	close(first)
	t := time.NewTicker(g.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		r, err := g.cfg.Sampler.Sample(ctx)
		if ctx.Err() != nil {
			return
		}
		g.apply(r, err)
	}
}

// apply takes in the result of one sample, updates admission and wakes the
// waiters it admits.
func (g *Governor) apply(r Reading, err error) {
	now := g.cfg.NowFunc()
	g.mu.Lock()
	defer g.mu.Unlock()
	if err != nil {
		g.stale, g.lastErr = true, err
	} else {
		g.stale, g.lastErr = false, nil
		g.reading, g.sampledAt = r, now
		g.judgeLocked(r)
	}
	g.updateLocked()
	g.grantLocked()
}

// judgeLocked updates the over-limit flags from a new reading: a limit is
// crossed above its maximum and cleared only at or below its low watermark.
func (g *Governor) judgeLocked(r Reading) {
	c, w := &g.cfg, &g.watermarks
	g.cpuOver = r.CPUPercent > pick(g.cpuOver, w.cpu, c.MaxCPUPercent)
	if r.MemoryLimit == 0 {
		g.memOver, g.availOver = false, false
		return
	}
	g.memOver = r.MemoryPercent() > pick(g.memOver, w.memory, c.MaxMemoryPercent)
	g.availOver = r.MemoryAvailable < pick(g.availOver, w.available, c.MinAvailableMemory)
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
		r := &g.reading
		cpuRoom = int64((g.cfg.MaxCPUPercent - r.CPUPercent) * 1000)
		if r.MemoryLimit > 0 {
			byPercent := float64(r.MemoryLimit)*g.cfg.MaxMemoryPercent/100 - float64(r.MemoryUsed)
			byAvail := float64(r.MemoryAvailable) - float64(g.cfg.MinAvailableMemory)
			memRoom = int64(min(byPercent, byAvail, math.MaxInt64/2))
		}
	}
	g.memRoom.Store(memRoom)
	g.cpuRoom.Store(cpuRoom)
	if refuse != g.refusing {
		g.refusing = refuse
		if refuse {
			g.gate.Add(gateRefuse)
		} else {
			g.gate.Add(-gateRefuse)
		}
	}
}
