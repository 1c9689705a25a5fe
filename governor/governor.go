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
	gateHold   = 2 // set while a blocked Acquire holds up later work
	gateWatch  = 4 // set while a channel from Changed is out
	gateWaiter = 8 // the bits from here up count blocked Acquire calls
)

// Governor admits work while the process has CPU, memory and a processing
// slot to spare. A background goroutine, started by Start, samples the
// resources every Config.Interval; TryAcquire and Acquire hand out Permits
// against the latest sample and the free slots.
//
// A Governor is created by New; the zero Governor is not usable: it admits
// nothing (TryAcquire reports false; Start and Acquire return an error
// wrapping ErrInvalidConfig, which Snapshot.Err holds too), rather than
// dereference the parts New makes. All its methods are safe for concurrent
// use. The Release of a Permit happens before
// the TryAcquire or Acquire that is granted its slots returns.
type Governor struct {
	cfg        Config
	watermarks watermarks

	// gate holds gateRefuse, gateHold, gateWatch and the number of waiters;
	// free is the number of free slots not kept by a record of table (see
	// permit), negative for a moment while a take that failed undoes itself.
	// They sit on separate cache lines: free is written by grants and
	// releases that miss their record's slot, gate seldom.
	gate atomic.Int64
	_    [64]byte
	free atomic.Int64
	_    [64]byte
	// cached has bit i set when record i of table may keep a free slot (see
	// permit). Written seldom: when a record first keeps a slot after a
	// scan found it without one.
	cached atomic.Uint64
	_      [56]byte
	// memRoom and cpuRoom are the memory (bytes) and CPU (thousandths of a
	// percentage point) that Weights may still reserve until the next sample.
	memRoom atomic.Int64
	cpuRoom atomic.Int64
	// memCeil is the most memory a Weight may ask for under the latest good
	// reading's memory limit (math.MaxInt64 if none). Written under mu.
	memCeil atomic.Int64

	table *permitTable // the records of Permits
	pool  sync.Pool    // of *permit, when the records in the table are held
	usage usage

	// life serialises Start and Stop and guards cancel and stopped.
	life    sync.Mutex
	cancel  context.CancelCauseFunc // cancels the sampling loop's context, which it owns
	stopped chan struct{}           // closed when the sampling loop has returned

	// mu guards the fields below it and the waiter queue.
	mu        sync.Mutex
	waiters   list.List // of *waiter, in arrival order
	isStopped bool
	refusing  bool          // mirrors gateRefuse
	holding   bool          // mirrors gateHold
	changed   chan struct{} // handed out by Changed, closed at the next change; nil if none
	reading   Reading
	roomsGen  uint64 // moves on whenever updateLocked sets memRoom and cpuRoom afresh
	sampledAt time.Time
	tickedAt  time.Time // when the latest sample (or late mark) was applied
	stale     bool      // no good sample yet, the last one failed, or it is late
	lastErr   error     // why the reading is stale: the last sample's error, or lateness
	cpuOver   bool      // hysteresis state of each limit
	memOver   bool
	availOver bool
}

// New returns a Governor configured by cfg, or an error wrapping
// ErrInvalidConfig for a field out of range. It starts no goroutine: until
// Start, the Governor has no reading and admits according to
// Config.StalePolicy. New cannot know the memory limit: a MinAvailableMemory
// that is not below it shows at the first sample, as a failed sample whose
// error wraps ErrInvalidConfig (see Config.MinAvailableMemory).
func New(cfg Config) (*Governor, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	g := &Governor{cfg: cfg, watermarks: newWatermarks(&cfg), stale: true}
	g.free.Store(int64(cfg.Slots))
	g.memCeil.Store(math.MaxInt64)
	g.table = newPermitTable(g)
	g.pool.New = func() any { return &permit{g: g, pooled: true} }
	g.usage.init(cfg.UsageWindow, cfg.NowFunc)
	g.mu.Lock()
	g.updateLocked()
	g.mu.Unlock()
	return g, nil
}

// Start starts the goroutine that samples the resources, at once and then
// every Config.Interval until Stop, and waits for the first sample so that
// admission has a reading from the start. A first sample that fails (an
// error, an invalid reading, a panic) does not fail Start: the reading stays
// stale and Snapshot.Err says why. If ctx is done first, for example because
// the Sampler hangs, Start returns ctx's error; sampling goes on until Stop
// all the same. Cancelling ctx after Start returns does not stop sampling.
// Start returns ErrStopped after Stop; calling it again while running does
// nothing.
func (g *Governor) Start(ctx context.Context) error {
	if g.table == nil { // its sampling goroutine would crash the process
		return errNotMade
	}
	if ctx == nil {
		return errNilCtx
	}
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
// idempotent and safe without Start. Called back from the sampling
// goroutine (by the Sampler, by NowFunc there, or by the Logger's handler
// for one of its records), Stop does not wait for that goroutine, which
// waits for the call: sampling ends once the call returns. It tells that
// goroutine by the functions on its stack, not by Governor: a Sampler of
// one Governor that stops another does not wait either.
func (g *Governor) Stop(ctx context.Context) error {
	if ctx == nil {
		return errNilCtx
	}
	g.life.Lock()
	g.mu.Lock()
	if !g.isStopped {
		g.isStopped = true
		g.updateLocked()
		g.notifyLocked()
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
	if onSamplingGoroutine() {
		return nil
	}
	select {
	case <-stopped:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
