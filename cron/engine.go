package cron

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jobkit/jobkit/internal/panicval"
	"github.com/jobkit/jobkit/internal/stack"
	"github.com/jobkit/jobkit/sched"
)

// Errors of the [Engine]. Its methods return errors that wrap one of them
// (or one of the parse errors, for a spec), to be matched with [errors.Is].
var (
	// ErrInvalidJob reports a job that cannot be registered: an empty
	// name, a nil handler or schedule, a schedule that panics, an invalid
	// retry policy, or a nil context.
	ErrInvalidJob = errors.New("cron: invalid job")

	// ErrDuplicateJob reports a Register of a name that is registered.
	ErrDuplicateJob = errors.New("cron: duplicate job name")

	// ErrUnknownJob reports a name that no registered job has.
	ErrUnknownJob = errors.New("cron: unknown job")

	// ErrInvalidConfig reports an invalid [Config].
	ErrInvalidConfig = errors.New("cron: invalid config")

	// ErrStopped reports a call on an engine that was stopped.
	ErrStopped = errors.New("cron: engine stopped")
)

// Config configures an [Engine]. The zero Config is valid: the engine then
// runs its jobs on a scheduler of its own.
type Config struct {
	// Scheduler runs the engine's jobs, on a queue of its own (see Queue),
	// sharing the scheduler's workers and governor with its other queues.
	// The caller starts and stops a scheduler given here; the engine's
	// Start and Stop only start and stop the engine's runs. Defaults to a
	// scheduler of the engine's own, with Workers workers, that Start
	// starts and Stop stops. The engine tells the time by the scheduler's
	// clock (sched.Config.Clock).
	Scheduler *sched.Scheduler

	// Workers is the number of workers of the engine's own scheduler: the
	// most runs at once. Defaults to sched's default, 8 × GOMAXPROCS. It
	// must be 0 when Scheduler is set.
	Workers int

	// Queue is the name of the engine's queue on the scheduler. Defaults to
	// "cron".
	Queue string

	// MaxConcurrency, if positive, bounds the runs of the engine's jobs at
	// once, below the workers. Defaults to 0: no bound but the workers.
	MaxConcurrency int

	// LeaderFunc says whether this process runs the jobs. The engine calls
	// it when a run is due, before the run, from the worker that would run
	// it; it must be safe for concurrent use and quick. When it returns
	// false the run is skipped here, as run elsewhere: it is not recorded
	// and never made up, and the job waits for its next time. A
	// multi-machine deployment plugs its leader election in here. A
	// LeaderFunc that panics counts as false. Defaults to always true.
	LeaderFunc func() bool

	// Logger receives the engine's warnings (a LeaderFunc that panicked or
	// exited its goroutine). Defaults to slog.Default().
	Logger *slog.Logger
}

// Engine runs periodic jobs: each registered job runs its handler at the
// times of its schedule, never two runs of one job at once, with missed runs
// handled by the job's [Missed] policy. See the package documentation for
// the semantics.
//
// The engine keeps exactly one entry per job on a [sched] queue, keyed by
// the job's name: the entry waits (delayed) until the job's next time, runs
// the handler, and is snoozed until the following time. There is no
// goroutine per job: the scheduler's timers and workers serve all of them.
//
// Make an Engine with [New]; the zero value is not usable: its methods that
// would run or change jobs return an error wrapping [ErrInvalidConfig]
// instead, and it lists no jobs. All methods are safe for concurrent use,
// and may be called from a job's handler or its retry policy's Delay (see
// Stop for what Stop does then).
type Engine struct {
	log    *slog.Logger
	leader func() bool
	s      *sched.Scheduler
	owned  bool // s is the engine's own: Start and Stop start and stop it
	q      *sched.Queue[string, string]
	store  *store

	// opMu serialises the management calls (Register, Update, Unregister,
	// Pause, Resume), so that their calls on the queue do not interleave.
	// It is taken before mu, and never by a run.
	opMu sync.Mutex

	// mu guards the jobs and the engine's lifecycle. It is never held
	// while a handler, a LeaderFunc or a call on the queue runs; the
	// queue's backend takes it when it settles a run (see store).
	mu       sync.Mutex
	jobs     map[string]*job
	started  bool
	stopping bool
	active   int           // runs between begin and end
	drained  chan struct{} // closed once stopping and active is 0
}

// New returns an engine configured by cfg, or an error wrapping
// [ErrInvalidConfig] (or the scheduler's error). It starts no goroutine:
// jobs can be registered before Start, and wait for it.
func New(cfg Config) (*Engine, error) {
	switch {
	case cfg.Workers < 0:
		return nil, fmt.Errorf("%w: Workers %d < 0", ErrInvalidConfig, cfg.Workers)
	case cfg.Workers != 0 && cfg.Scheduler != nil:
		return nil, fmt.Errorf("%w: Workers is for the engine's own scheduler; a shared Scheduler has its own", ErrInvalidConfig)
	case cfg.MaxConcurrency < 0:
		return nil, fmt.Errorf("%w: MaxConcurrency %d < 0", ErrInvalidConfig, cfg.MaxConcurrency)
	}
	if cfg.Queue == "" {
		cfg.Queue = "cron"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	e := &Engine{
		log:     cfg.Logger,
		leader:  cfg.LeaderFunc,
		s:       cfg.Scheduler,
		jobs:    make(map[string]*job),
		drained: make(chan struct{}),
	}
	if e.s == nil {
		s, err := sched.New(sched.Config{Workers: cfg.Workers, Logger: cfg.Logger})
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
		}
		e.s, e.owned = s, true
	}
	e.store = &store{Backend: sched.NewMemory[string, string](), e: e}
	q, err := sched.NewQueue(e.s, cfg.Queue, sched.QueueConfig[string, string]{
		Handler: e.handle,
		// A run of a cron job is one entry run: runs due together go to
		// different workers instead of waiting in one worker's batch.
		BatchSize: 1,
		// A Func gets no Job to heartbeat with: its run's lease is
		// renewed while it runs, so that a reaper on the same scheduler
		// does not take a long run for a stuck one.
		AutoRenew:      true,
		MaxConcurrency: cfg.MaxConcurrency,
		// The engine never returns a failure to the queue (a job's
		// error is recorded, and its retries are the engine's): the
		// entry snoozes to the job's next time after every run.
		Retry:   &sched.NoRetry,
		Backend: e.store,
	})
	if err != nil {
		if errors.Is(err, sched.ErrInvalid) {
			err = fmt.Errorf("%w: %w", ErrInvalidConfig, err)
		}
		return nil, err
	}
	q.Pause() // until Start
	e.q = q
	return e, nil
}

// Start starts running the jobs: their entries are dispatched from now on,
// and the engine's own scheduler, if it has one, starts. Jobs registered
// before Start whose times passed meanwhile are late or missed (see the
// package documentation). A second Start does nothing; Start after Stop
// returns [ErrStopped]. It returns an error wrapping [ErrInvalidConfig] for a
// nil ctx, and ctx's error if it is done.
func (e *Engine) Start(ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("%w: nil context", ErrInvalidConfig)
	}
	if err := e.made(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	e.mu.Lock()
	switch {
	case e.stopping:
		e.mu.Unlock()
		return ErrStopped
	case e.started:
		e.mu.Unlock()
		return nil
	}
	e.started = true
	e.mu.Unlock()
	if e.owned {
		if err := e.s.Start(ctx); err != nil {
			e.mu.Lock()
			e.started = false
			e.mu.Unlock()
			return err
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopping { // a concurrent Stop
		return ErrStopped
	}
	e.q.Resume()
	return nil
}

// Stop stops the engine and drains it: no run starts after Stop is called,
// and Stop waits until the runs in progress have returned (their context is
// not cancelled). Then it stops the engine's own scheduler, if it has one.
// It returns ctx's error if ctx ends first; the runs go on, and a later Stop
// waits again. A Stop called by a job's Func, or by its retry policy's
// Delay, does not wait for the runs (it would wait for itself): it stops
// the engine and returns, and a later Stop from outside waits for the
// drain. (It tells the runs by the goroutine's stack, not by engine, as
// sched.Scheduler.Stop does: a job of one engine that stops another does
// not wait for that one's runs either.) After Stop, Register returns
// [ErrStopped]. Stop is idempotent and safe without Start.
//
// With a shared [Config.Scheduler] the engine's queue stays registered on
// it, paused, with its entries.
func (e *Engine) Stop(ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("%w: nil context", ErrInvalidConfig)
	}
	if err := e.made(); err != nil {
		return err
	}
	e.mu.Lock()
	if !e.stopping {
		e.stopping = true
		e.q.Pause()
		if e.active == 0 {
			close(e.drained)
		}
	}
	e.mu.Unlock()
	if inRun() {
		// Called by a job's Func: the engine's own scheduler, stopped
		// from its worker, does not wait either.
		if e.owned {
			return e.s.Stop(ctx)
		}
		return nil
	}
	select {
	case <-e.drained:
	case <-ctx.Done():
		return ctx.Err()
	}
	if e.owned {
		return e.s.Stop(ctx)
	}
	return nil
}

// made returns an error wrapping ErrInvalidConfig for an Engine not made by
// New (the zero value, a literal), which has no queue, scheduler or clock:
// the calls that need them return it rather than dereference nil (and Stop
// rather than panic with the engine's lock held, which would leave every
// later call blocked).
func (e *Engine) made() error {
	if e.q == nil {
		return fmt.Errorf("%w: an Engine not made by New", ErrInvalidConfig)
	}
	return nil
}

// inRun reports whether the calling goroutine runs a job's Func (an
// engine's handler is on its stack), or runs a callback that one of the
// scheduler's goroutines waits on, such as a retry policy's Delay, which
// the run that failed waits for (sched calls those on a goroutine of their
// own, under sched.onBehalf). Either way Stop must not wait for the runs
// to end. It walks the stack: Stop alone asks.
func inRun() bool {
	return stack.Within(func(fn string) bool {
		return fn == "github.com/jobkit/jobkit/cron.(*Engine).handle" || fn == "github.com/jobkit/jobkit/sched.onBehalf"
	})
}

// isLeader calls the LeaderFunc; a panic counts as false.
func (e *Engine) isLeader() (ok bool) {
	if e.leader == nil {
		return true
	}
	defer func() {
		if r := recover(); r != nil {
			e.log.Warn("cron: LeaderFunc panicked; the run is skipped", slog.String("panic", panicval.String(r)))
			ok = false
		}
	}()
	return e.leader()
}

// now is the time by the scheduler's clock (sched.Config.Clock), the one
// the scheduler promotes the engine's delayed entries by.
func (e *Engine) now() time.Time { return e.s.Clock().Now() }
