package sched

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jobkit/jobkit/governor"
	"github.com/jobkit/jobkit/internal/stack"
)

// Scheduler runs the handlers of the jobs added to its queues: a few
// scheduling loops pick a queue, ask the governor, take a batch of entries
// and hand it to one of many processing workers. See the package
// documentation for the semantics.
//
// A Scheduler is made by New; the zero value is not usable. All methods are
// safe for concurrent use.
type Scheduler struct {
	cfg   Config
	gov   *governor.Governor
	clock Clock
	// epoch turns instants into the int64 nanoseconds the scheduler keeps
	// (due times, blocks, buckets): set once by New, from the clock's
	// first reading, and only read afterwards.
	epoch epoch
	// clockBroke is closed when Config.Clock breaks (see guardedClock), to
	// wake the goroutines that wait on its timers; nil with the system
	// clock.
	clockBroke <-chan struct{}
	log        *slog.Logger

	// mu guards the queue registry, the lifecycle flags and the fairness
	// fields of every queue (see pick).
	mu     sync.Mutex
	queues []runner
	byName map[string]runner
	// reserved holds the names of queues being registered: NewQueue takes
	// the name before it makes the queue's metrics or opens its backend,
	// so that a taken name (or a stopped scheduler) touches neither.
	reserved map[string]bool
	started  bool
	stopped  bool
	rr       int // where the next pick starts, for ties
	// vtime is the virtual time of the last pick: the pass of the queue
	// it picked, before its charge, the smallest of the ready queues'. A
	// queue that becomes ready when none stayed ready starts there (see
	// pick).
	vtime float64
	// readyScratch is pick's list of ready queues.
	readyScratch []int

	stopping  atomic.Bool // Stop was called: nothing new starts
	cancelled atomic.Bool // StopAndCancel was called

	// life serialises Start and Stop: a lock with room for one, so that a
	// Stop waiting for it can give up when its context ends.
	life        chan struct{}
	runCtx      context.Context // the handlers' context, owned: cancelled by StopAndCancel
	cancelRun   context.CancelCauseFunc
	loopCtx     context.Context // the loops' and helpers' context, owned: cancelled by Stop
	cancelLoops context.CancelCauseFunc
	loops       sync.WaitGroup
	workers     sync.WaitGroup
	helpers     sync.WaitGroup
	workCh      chan work    // set by Start, then never changed
	workClosed  bool         // guarded by mu
	idle        atomic.Int64 // workers waiting for work

	// liveMu guards the batches in workers' hands, for the reaper and
	// Stop. abandoned counts the workers whose batch was abandoned while a
	// handler ran and that have not returned yet.
	liveMu    sync.Mutex
	live      []live
	abandoned atomic.Int64
	// rescue gives each batch a context of its own, for the reaper to
	// cancel (see Inspector.EnableRescue).
	rescue atomic.Bool

	// Wakeups of the loops: waiters counts the loops that wait, each on its
	// channel in wakes (made by Start, one per loop).
	waiters atomic.Int32
	wakes   []chan struct{}

	// The timekeeper promotes delayed entries when they are due and deletes
	// final entries when they expire, on one timer for all of them;
	// keeperAt is when it will next look (nanoseconds since the epoch, 0: not before
	// it is woken).
	keeperWake chan struct{}
	keeperAt   atomic.Int64

	// gauges is where the metrics loop is: gaugesIdle, gaugesBusy while
	// it calls the gauges' metrics, or gaugesLetGo once a StopAndCancel
	// let it go there (see letGaugesGo).
	gauges atomic.Int32
}

// runner is a queue as the scheduler sees it, whatever its types.
type runner interface {
	base() *queueBase
	dispatch(ctx context.Context, now time.Time, permit governor.Permit, charged time.Duration, n int) work
	promote(ctx context.Context, now time.Time) (int64, time.Time)
	expire(ctx context.Context, now time.Time) (time.Time, bool)
	counts(ctx context.Context) (Counts, error)
	list(ctx context.Context, q *Query, after ID) iter.Seq2[Summary, error]
	get(ctx context.Context, id ID) (Summary, error)
	delete(ctx context.Context, q *Query) (int, error)
	retry(ctx context.Context, q *Query, reset bool) (int, error)
	setDisabled(ctx context.Context, id ID, disabled bool) error
	reap(ctx context.Context, now, before time.Time, out *[]Rescue) error
	one(ctx context.Context, id ID, do func(*one) (int, error)) error
	retryOne(ctx context.Context, o *one, reset bool) (int, error)
	deleteOne(ctx context.Context, o *one) (int, error)
}

func (q *queueBase) base() *queueBase { return q }

func (q *Queue[T, K]) expire(ctx context.Context, now time.Time) (time.Time, bool) {
	t, ok, err := q.backend.Expire(ctx, now)
	if err != nil {
		q.s.warn("backend Expire failed", q.name, err)
	}
	return t, ok
}

func (q *Queue[T, K]) counts(ctx context.Context) (Counts, error) { return q.backend.Counts(ctx) }

// New returns a Scheduler configured by cfg, or an error wrapping
// ErrInvalid. It starts no goroutine: queues can be registered and jobs
// added before Start, and wait for it.
func New(cfg Config) (*Scheduler, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Scheduler{
		cfg: cfg, gov: cfg.Governor, clock: cfg.Clock, log: cfg.Logger,
		byName:     make(map[string]runner),
		reserved:   make(map[string]bool),
		keeperWake: make(chan struct{}, 1),
		life:       make(chan struct{}, 1),
	}
	if g, ok := cfg.Clock.(*guardedClock); ok {
		s.clockBroke = g.broke
	}
	s.epoch.ns(cfg.Clock.Now())
	if s.gov == nil {
		// Slots only: never started, the governor has no reading and
		// admits on slots alone; it still accounts usage by queue.
		s.gov, err = governor.New(governor.Config{
			Slots:   cfg.Workers,
			Sampler: governor.SamplerFunc(func(context.Context) (governor.Reading, error) { return governor.Reading{}, nil }),
			NowFunc: cfg.Clock.Now,
		})
		if err != nil {
			return nil, fmt.Errorf("sched: internal governor: %w", err)
		}
	}
	s.runCtx, s.cancelRun = context.WithCancelCause(context.Background())
	s.loopCtx, s.cancelLoops = context.WithCancelCause(context.Background())
	return s, nil
}

// register adds q, whose name was reserved, to the registry. It does so
// also if s stopped since the reservation: q's backend is open by now, and
// NewQueue is then as if it had ended just before the Stop (q's adds return
// ErrStopped).
func (s *Scheduler) register(q runner) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := q.base()
	delete(s.reserved, b.name)
	s.byName[b.name] = q
	s.queues = append(s.queues, q)
	b.pass = s.minPassLocked()
}

// reserve takes name for a queue that NewQueue is about to make, or
// returns ErrStopped once s was stopped, or an error wrapping
// ErrDuplicateQueue if the name is registered or reserved. register, or
// unreserve if the queue is not made, gives the reservation back.
func (s *Scheduler) reserve(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.stopped:
		return ErrStopped
	case s.byName[name] != nil || s.reserved[name]:
		return fmt.Errorf("%w: %q", ErrDuplicateQueue, name)
	}
	s.reserved[name] = true
	return nil
}

func (s *Scheduler) unreserve(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.reserved, name)
}

// checkCtx returns an error wrapping ErrInvalid for a nil ctx, and ctx's
// error once it is done: every exported method that takes a context checks
// it first.
func checkCtx(ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("%w: nil context", ErrInvalid)
	}
	return ctx.Err()
}

// errNotMade is the error of a method of a Scheduler not made by New.
var errNotMade = fmt.Errorf("%w: a Scheduler not made by New (a nil or zero Scheduler)", ErrInvalid)

// made returns errNotMade if s was not made by New: a nil pointer, or a
// zero Scheduler, whose Start would otherwise wait for ever on its nil
// channels.
func (s *Scheduler) made() error {
	if s == nil || s.life == nil {
		return errNotMade
	}
	return nil
}

// checkAdd returns the error of an add under ctx, if any.
func (s *Scheduler) checkAdd(ctx context.Context) error {
	if err := checkCtx(ctx); err != nil {
		return err
	}
	if s.stopping.Load() {
		return ErrStopped
	}
	return nil
}

// Start starts the scheduling loops, the workers and the janitor, which
// run until Stop. It returns ErrStopped after Stop, and an error wrapping
// ErrInvalid for a nil ctx; a second call does nothing. Cancelling ctx
// after Start returns does not stop the scheduler.
func (s *Scheduler) Start(ctx context.Context) error {
	if err := s.made(); err != nil {
		return err
	}
	if err := checkCtx(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	stopped, started := s.stopped, s.started
	s.mu.Unlock()
	switch {
	// Before life: a Stop holds it while it waits for the handlers, one
	// of which may be calling Start. A handler runs once the scheduler
	// started, so its Start returns here even if a Stop begins as it
	// does: it does not wait for life behind a Stop that waits for it.
	case stopped:
		return ErrStopped
	case started:
		return nil
	}
	s.life <- struct{}{}
	defer func() { <-s.life }()
	s.mu.Lock()
	stopped, started = s.stopped, s.started
	if !stopped { // a Start refused after Stop starts nothing, and forgets nothing
		s.started = true
	}
	s.mu.Unlock()
	switch {
	case stopped:
		return ErrStopped
	case started:
		return nil
	}
	s.workCh = make(chan work)
	s.workers.Add(s.cfg.Workers)
	for range s.cfg.Workers {
		go s.worker()
	}
	s.wakes = make([]chan struct{}, s.cfg.Loops)
	for i := range s.wakes {
		s.wakes[i] = make(chan struct{}, 1)
	}
	s.loops.Add(s.cfg.Loops)
	for _, wake := range s.wakes {
		go s.loop(s.loopCtx, wake)
	}
	s.helpers.Add(1)
	go s.timekeeper(s.loopCtx)
	if s.cfg.Metrics != nil {
		s.helpers.Add(1)
		go s.metricsLoop(s.loopCtx)
	}
	return nil
}

// Stop stops the scheduler and drains it: nothing new starts, and Stop
// waits until the running handlers have returned; entries not started yet
// go back to pending, delayed entries stay delayed. A Stop called on one
// of a scheduler's own goroutines (by a handler, or by a retry policy's
// Delay, a metric, a Clock, a backend or the Logger that one of them
// calls) does not wait (it would
// wait for itself, or for another Stop that waits for it): it stops the
// scheduler and returns, and a goroutine of its own drains it, which a
// later Stop waits for. (It tells the goroutines by their stacks, not by
// scheduler: a handler of one scheduler that stops another does not wait
// either.) It returns ctx's error
// if ctx is done first (the handlers go on, and a later Stop waits again).
// After Stop, Add returns ErrStopped. Stop is idempotent and safe without
// Start; it returns an error wrapping ErrInvalid for a nil ctx.
func (s *Scheduler) Stop(ctx context.Context) error {
	return s.stop(ctx, false)
}

// StopAndCancel is Stop that also cancels the context of the running
// handlers, with cause ErrStopped: a handler that returns the context's
// error then ends its run as a rerun, without spending an attempt. If ctx
// is done before every handler has returned, StopAndCancel abandons the
// runs still going: their entries go back to pending as reruns, or are
// poisoned past their queue's MaxReruns (a late result of theirs is
// ignored), their handlers keep their goroutines until
// they return (Inspector.Abandoned counts them), and it returns an error
// wrapping ErrAbandoned. It never waits for runs a reaper rescued earlier.
func (s *Scheduler) StopAndCancel(ctx context.Context) error {
	return s.stop(ctx, true)
}

func (s *Scheduler) stop(ctx context.Context, cancel bool) error {
	if err := s.made(); err != nil {
		return err
	}
	if ctx == nil {
		return fmt.Errorf("%w: nil context", ErrInvalid)
	}
	started := s.halt(cancel)
	if onOwnGoroutine() {
		// Called by a handler, or by a dependency on one of the
		// scheduler's goroutines: waiting would wait for itself. It
		// returns at once; a goroutine of its own closes the work channel
		// once the loops have ended, so that the workers end too.
		if started {
			go s.drain()
		}
		return nil
	}
	select {
	case s.life <- struct{}{}: // free: taken even if ctx is done, so that a StopAndCancel drains what it abandons
	default:
		if err := s.awaitLife(ctx, cancel); err != nil {
			return err
		}
	}
	defer func() { <-s.life }()
	if !started {
		return nil
	}
	if err := wait(ctx, &s.loops); err != nil {
		// Also StopAndCancel's: a ctx done already, or one that ends while
		// a loop finishes a backend call, leaves the handlers running too.
		return s.timedOut(cancel, err)
	}
	s.closeWork()
	if err := wait(ctx, &s.workers); err != nil {
		return s.timedOut(cancel, err)
	}
	return wait(ctx, &s.helpers)
}

// awaitLife waits for life, held by another Start or stop, and takes it;
// or returns ctx's error once ctx is done. StopAndCancel abandons the runs
// still going then all the same: the other stop may be a Stop with no
// deadline that waits for them, which can then return too; it leaves the
// rest of the drain to that stop.
func (s *Scheduler) awaitLife(ctx context.Context, cancel bool) error {
	select {
	case s.life <- struct{}{}:
		return nil
	case <-ctx.Done():
	}
	if cancel {
		if n := s.abandonRuns(); n > 0 {
			return fmt.Errorf("%w: %d runs", ErrAbandoned, n)
		}
	}
	return ctx.Err()
}

// timedOut is what a stop that holds life returns when its ctx ended with
// err while it waited for the loops or the workers: Stop returns err.
// StopAndCancel abandons the runs still going and, if there were any,
// waits for the rest, which ends promptly (the loops' and helpers' context
// is cancelled, the workers not abandoned have no run and their channel
// is closed; a metrics loop hung in a gauge's metric is let go, as the
// abandoned handlers are), and returns ErrAbandoned.
func (s *Scheduler) timedOut(cancel bool, err error) error {
	if !cancel {
		return err
	}
	n := s.abandonRuns()
	if n == 0 {
		return err
	}
	s.loops.Wait()
	s.closeWork()
	s.workers.Wait()
	s.letGaugesGo()
	s.helpers.Wait()
	return fmt.Errorf("%w: %d runs", ErrAbandoned, n)
}

// abandonRuns abandons the runs still going at a StopAndCancel that ran
// out of time, and returns how many: their entries go back to pending (see
// StopAndCancel); their handlers keep their goroutines until they return.
func (s *Scheduler) abandonRuns() int {
	n := 0
	for _, b := range s.lives() {
		if b.abandon() {
			n++
		}
	}
	if n > 0 {
		s.log.Warn("sched: stop abandoned runs whose handlers did not return", slog.Int("runs", n))
	}
	return n
}

// closeWork closes the workers' channel once.
func (s *Scheduler) closeWork() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.workClosed {
		close(s.workCh)
		s.workClosed = true
	}
}

// wait waits for wg, or until ctx is done.
func wait(ctx context.Context, wg *sync.WaitGroup) error {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// drain is the rest of a Stop called on one of the scheduler's goroutines:
// it waits for the loops, which end promptly once halted, and closes the
// work channel. It holds life only meanwhile, so that a Stop from outside
// waits for the workers with its own context.
func (s *Scheduler) drain() {
	s.life <- struct{}{}
	defer func() { <-s.life }()
	s.loops.Wait()
	s.closeWork()
}

// halt is the part of a stop that does not wait: nothing new starts, Add
// fails, the loops and helpers are told to end, and with cancel the
// handlers' context is cancelled. It reports whether the scheduler had
// started, and so has goroutines to wait for.
func (s *Scheduler) halt(cancel bool) (started bool) {
	s.mu.Lock()
	started = s.started
	s.stopped = true
	s.mu.Unlock()
	s.stopping.Store(true)
	if cancel {
		s.cancelled.Store(true)
		s.cancelRun(ErrStopped)
	}
	s.cancelLoops(ErrStopped)
	return started
}

// ownGoroutines are the functions at the root of the scheduler's
// goroutines: the workers (and the handlers they call), the loops, the
// helpers, and the goroutines they wait on for a callback (see isolated).
var ownGoroutines = map[string]bool{
	"github.com/jobkit/jobkit/sched.(*Scheduler).worker":      true,
	"github.com/jobkit/jobkit/sched.(*Scheduler).loop":        true,
	"github.com/jobkit/jobkit/sched.(*Scheduler).admission":   true,
	"github.com/jobkit/jobkit/sched.(*Scheduler).timekeeper":  true,
	"github.com/jobkit/jobkit/sched.(*Scheduler).metricsLoop": true,
	"github.com/jobkit/jobkit/sched.onBehalf":                 true,
}

// onOwnGoroutine reports whether the calling goroutine is one of the
// scheduler's, or one that a worker waits on. It walks the stack: Stop
// alone asks.
func onOwnGoroutine() bool {
	return stack.Within(func(fn string) bool { return ownGoroutines[fn] })
}

// stopCancelled reports whether err is a handler's report of the
// cancellation by StopAndCancel.
func (s *Scheduler) stopCancelled(err error) bool {
	return s.cancelled.Load() && (errors.Is(err, context.Canceled) || errors.Is(err, ErrStopped))
}

// worker runs work until the channel closes. If a handler ends the
// goroutine (runtime.Goexit), the batch has settled on its way out and a
// new worker takes this one's place. If its batch was abandoned, another
// worker took its place then (handOver), and this goroutine ends as soon
// as the batch's run returns: it does not rejoin the pool.
func (s *Scheduler) worker() {
	normal := false
	var cur work
	defer func() {
		switch {
		case cur != nil && cur.wasAbandoned():
			s.abandoned.Add(-1) // its place was handed over
		case !normal:
			s.workers.Add(1) // before Done: Stop's wait cannot finish between them
			go s.worker()
			s.workers.Done()
		default:
			s.workers.Done()
		}
	}()
	// workCh is set by Start before the first worker and never changes:
	// a worker started after the channel closed (one replacing a worker
	// that ended in runtime.Goexit during Stop) sees it closed and ends.
	ch := s.workCh
	for {
		s.idle.Add(1)
		s.wakeLoops()
		w, ok := <-ch
		if !ok {
			normal = true
			return
		}
		cur = w
		if w.run() {
			normal = true
			return
		}
		cur = nil
	}
}

// enlive registers the batch b as in a worker's hands.
func (s *Scheduler) enlive(b live) {
	s.liveMu.Lock()
	b.setLiveAt(len(s.live))
	s.live = append(s.live, b)
	s.liveMu.Unlock()
}

// unlive removes b from the live batches.
func (s *Scheduler) unlive(b live) {
	s.liveMu.Lock()
	defer s.liveMu.Unlock()
	i := b.liveIndex()
	if i < 0 || i >= len(s.live) || s.live[i] != b {
		return
	}
	last := len(s.live) - 1
	s.live[i] = s.live[last]
	s.live[i].setLiveAt(i)
	s.live[last] = nil
	s.live = s.live[:last]
	b.setLiveAt(-1)
}

// lives returns a copy of the live batches: their methods take their own
// locks, which must not be taken under liveMu.
func (s *Scheduler) lives() []live {
	s.liveMu.Lock()
	defer s.liveMu.Unlock()
	return slices.Clone(s.live)
}

// handOver accounts for a worker lost inside an abandoned batch's handler:
// unless the scheduler stops, a new worker takes its place at once.
func (s *Scheduler) handOver() {
	s.abandoned.Add(1)
	if !s.stopping.Load() {
		s.workers.Add(1)
		go s.worker()
	}
	s.workers.Done()
}

// workDone is called when a worker finished a batch: its queue has room
// again.
func (s *Scheduler) workDone() { s.wakeLoops() }

// reserveWorker takes an idle worker for a batch, or reports false.
func (s *Scheduler) reserveWorker() bool {
	for {
		n := s.idle.Load()
		if n <= 0 {
			return false
		}
		if s.idle.CompareAndSwap(n, n-1) {
			return true
		}
	}
}

func (s *Scheduler) unreserveWorker() { s.idle.Add(1) }

// listen returns the loop's wake channel, which receives at the next
// wakeLoops. Every listen is followed by one unlisten.
func (s *Scheduler) listen(wake chan struct{}) <-chan struct{} {
	s.waiters.Add(1)
	return wake
}

func (s *Scheduler) unlisten() { s.waiters.Add(-1) }

// wakeLoops wakes the loops that wait. A change that may make a queue
// ready is published before wakeLoops, and a loop listens before it looks:
// one of the two sees the other. Each loop has a wake channel with room for
// one wakeup, so that a wakeup allocates nothing and is not lost if the
// loop is between its look and its wait; a loop may so wake once for
// nothing.
func (s *Scheduler) wakeLoops() {
	if s.waiters.Load() == 0 {
		return
	}
	for _, c := range s.wakes {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// warn logs a failure of a queue's backend or governor.
func (s *Scheduler) warn(msg, queue string, err error) {
	s.log.Warn("sched: "+msg, slog.String("queue", queue), slog.Any("error", err))
}

// retained tells the timekeeper that an entry of q reached a final state
// at fin, so that it deletes it when it expires.
func (s *Scheduler) retained(q *queueBase, kind OutcomeKind, fin time.Time) {
	if ttl := q.ttl(kind); ttl > 0 {
		// In nanoseconds since the epoch, which cost less than time.Time's Add;
		// saturated, for a retention of centuries.
		s.wakeTimekeeper(addNanos(s.ns(fin), ttl))
	}
}

// wakeTimekeeper wakes the timekeeper if it would look later than at
// (nanoseconds since the epoch).
func (s *Scheduler) wakeTimekeeper(at int64) {
	// 0: asleep with no timer; 1: awake, looking. A saturated at, past the
	// instants the epoch holds, cannot be compared: it may be sooner than
	// the wait the timekeeper took from the backends (see timekeeper).
	if k := s.keeperAt.Load(); k <= 1 || at < k || at == math.MaxInt64 {
		select {
		case s.keeperWake <- struct{}{}:
		default:
		}
	}
}

// timekeeper promotes delayed entries when they are due and deletes final
// entries when they expire, sleeping on one timer until the earliest of
// these times or until woken by a sooner one.
func (s *Scheduler) timekeeper(ctx context.Context) {
	normal := false
	defer s.respawn(&normal, s.timekeeper, ctx)
	timer := s.clock.NewTimer()
	defer timer.Stop()
	broke := s.clockBroke
	for {
		// Publish "awake" before looking, so that a sooner time set while
		// it looks wakes it again.
		s.keeperAt.Store(1)
		now := s.clock.Now()
		n := s.ns(now)
		var (
			next int64
			soon time.Time // the soonest of the backends' own times
		)
		soonest := func(t int64) {
			if t != 0 && (next == 0 || t < next) {
				next = t
			}
		}
		s.mu.Lock()
		queues := s.queues
		s.mu.Unlock()
		for _, q := range queues {
			due, exp, at := s.keep(ctx, q, now)
			soonest(due)
			soonest(exp)
			if !at.IsZero() && (soon.IsZero() || at.Before(soon)) {
				soon = at
			}
		}
		s.keeperAt.Store(next)
		if next != 0 {
			d := subNanos(next, n)
			if d <= 0 && next == math.MaxInt64 && !soon.IsZero() {
				// Past the instants the epoch holds (a Clock that
				// jumped), every later one is the same saturated
				// instant, which has always come; a backend whose own
				// instants start there tells them apart, and says
				// how long to wait. Waiting for 0 spun until then.
				d = soon.Sub(now)
			}
			timer.Reset(d)
		}
		select {
		case <-ctx.Done():
			normal = true
			return
		case <-s.keeperWake:
		case <-timer.C():
		case <-broke: // once: the timer moves to the system clock
			broke = nil
		}
		timer.Stop()
	}
}

// ns returns t in nanoseconds since the scheduler's epoch.
func (s *Scheduler) ns(t time.Time) int64 { return s.epoch.ns(t) }

// Clock returns the scheduler's clock: Config.Clock, guarded against its
// panics as Config says, or the system clock.
func (s *Scheduler) Clock() Clock { return s.clock }

// ClockBroken returns a channel that is closed when Config.Clock breaks
// (panics, or ends a goroutine; see Config.Clock) and the scheduler tells
// the time by the system clock from then on. A timer of the broken clock
// may never fire again: a goroutine that waits on one it got from Clock
// should wait on this channel too, and make a new timer when it closes
// (Clock's NewTimer then makes one of the system clock). For the system
// clock (and a Scheduler not made by New) the channel is nil: never
// closed.
func (s *Scheduler) ClockBroken() <-chan struct{} {
	if s == nil {
		return nil
	}
	return s.clockBroke
}

// Logger returns the scheduler's logger: Config.Logger, with its handler
// guarded (see Config.Logger).
func (s *Scheduler) Logger() *slog.Logger { return s.log }

// keep promotes q's due entries and deletes its expired ones at now, and
// returns when it next has one due and one expiring (nanoseconds since the
// epoch, 0: none), and the sooner of the two as the backend said it, if it
// did (zero: not asked, or none). A panic of q's backend is contained:
// logged, and q is looked at again in a second.
func (s *Scheduler) keep(ctx context.Context, q runner, now time.Time) (due, exp int64, at time.Time) {
	b := q.base()
	if until, ok := b.aloneUntil(now); ok {
		return s.ns(until), 0, until // left alone (see containStack): looked at again then
	}
	err := b.call("Promote or Expire", func() error {
		due = b.due.Load()
		if due != 0 && due <= s.ns(now) {
			due, at = q.promote(ctx, now)
		}
		if t, ok := q.expire(ctx, now); ok {
			exp = s.ns(t)
			if at.IsZero() || t.Before(at) {
				at = t
			}
		}
		return nil
	})
	if err != nil {
		return s.ns(now.Add(time.Second)), 0, time.Time{}
	}
	return due, exp, at
}

// respawn is deferred by the scheduler's helper goroutines (the
// timekeeper, the metrics loop), each of which runs f(ctx), holds nothing
// between its steps, and sets *normal when it returns. It ends the
// helper's count then; if a dependency ended the goroutine instead
// (runtime.Goexit in a Clock, a backend or a metric), it starts f again in
// its place, which the dependency, broken, switched off or its queue left
// alone for a second by then, does not end again at once; once ctx is
// done it starts none.
func (s *Scheduler) respawn(normal *bool, f func(context.Context), ctx context.Context) {
	if *normal || ctx.Err() != nil {
		s.helpers.Done()
		return
	}
	go f(ctx)
}

// Queue returns the queue registered as name, with the types it was
// registered with, or an error wrapping ErrUnknownQueue.
func QueueOf[T any, K comparable](s *Scheduler, name string) (*Queue[T, K], error) {
	if err := s.made(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	r := s.byName[name]
	s.mu.Unlock()
	if r == nil {
		return nil, fmt.Errorf("%w: %q", ErrUnknownQueue, name)
	}
	q, ok := r.(*Queue[T, K])
	if !ok {
		return nil, fmt.Errorf("%w: queue %q has other types", ErrInvalid, name)
	}
	return q, nil
}

// ttl is how long q keeps an entry that ended with kind.
func (q *queueBase) ttl(kind OutcomeKind) time.Duration {
	r := q.retention
	switch kind {
	case OutcomeSucceeded:
		return r.Succeeded
	case OutcomeCancelled:
		return r.Cancelled
	}
	return r.Failed
}

// minPassLocked returns the smallest virtual time of the ready queues, or,
// with none ready, the virtual time of the last pick (see pick): that of an
// idle queue would hand its debt or credit to a queue registered now.
func (s *Scheduler) minPassLocked() float64 {
	min := math.Inf(1)
	for _, q := range s.queues {
		if b := q.base(); b.wasReady && b.pass < min {
			min = b.pass
		}
	}
	if math.IsInf(min, 1) {
		return s.vtime
	}
	return min
}
