package sched

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/time/rate"

	"github.com/jobkit/jobkit/governor"
	"github.com/jobkit/jobkit/internal/keys"
	"github.com/jobkit/jobkit/internal/panicval"
	"github.com/jobkit/jobkit/scope"
)

// Handler runs one job. Its error says how the run ended: nil succeeds; an
// error made by Permanent, Snooze, Cancel or Rerun does what they say; any
// other error, or a panic, is a failure that the queue's retry policy
// retries. The job is valid only until the handler returns.
type Handler[T any, K comparable] func(ctx context.Context, job *Job[T, K]) error

// QueueConfig configures a queue of payloads of type T whose distinct keys
// have type K. Only Handler is required.
type QueueConfig[T any, K comparable] struct {
	// Handler runs the jobs. Required.
	Handler Handler[T, K]

	// Key returns a payload's distinct key: at most one live entry per key.
	// It may be nil when T is K: the payload is then its own key. A key
	// that is not equal to itself (NaN) or cannot be hashed is refused by
	// Add with an error wrapping ErrInvalid.
	Key func(T) K

	// Priority, in [MinPriority, MaxPriority], is the queue's weight when
	// scheduling loops share the workers among queues, and the priority of
	// its entries unless an add says otherwise. Defaults to MinPriority.
	Priority int

	// MaxConcurrency bounds the entries of the queue that run at once
	// (and that are awaiting or running, when the bound is not lowered
	// meanwhile). A batch of a capped queue takes at most MaxConcurrency ÷
	// Config.Workers entries (at least one), so that a saturated queue
	// runs min(MaxConcurrency, Workers) at once. Defaults to 0: no bound
	// but the workers.
	MaxConcurrency int

	// Rate bounds how many entries start per second, with bursts of up to
	// Burst (a token bucket). Defaults to 0: no bound. Burst defaults to
	// the ceiling of Rate, at least 1.
	Rate  float64
	Burst int

	// Group, if not nil, returns a payload's group: entries of one group
	// are taken together, in the order they were added, and run one after
	// another by one worker; no two batches of a group run at once. An
	// empty group is no group. A rescue (see Lease) ends its batch, and
	// frees the group: the group's next batch may then start while the
	// rescued handler, if it ignores its cancelled context, still runs,
	// as a rescued entry's next run may.
	Group func(T) string

	// BatchSize is the most entries a scheduling loop hands to a worker at
	// once; the worker runs them one after another. Larger batches cost
	// less per job; smaller ones spread jobs over more workers. Once a
	// batch has ended, a batch takes fewer when the queue's runs are long:
	// about a millisecond's worth by the moving average of its runs, at
	// least one, so that runs of milliseconds or more spread over the
	// workers (see also MaxConcurrency). Defaults to 16, at most 4096.
	BatchSize int

	// Weight is what a batch asks of the governor. Defaults to one slot.
	Weight governor.Weight

	// Retry is the retry policy of failed entries. Defaults to DefaultRetry.
	Retry *RetryPolicy

	// MaxReruns is how many runs of an entry may end without a result of
	// their own (Rerun, a shutdown) before it is poisoned. Defaults to 25;
	// negative is invalid.
	MaxReruns int

	// Retention says how long final entries are kept. Defaults to the
	// scheduler's.
	Retention *Retention

	// BlockFailed makes a failed entry, while it is kept, refuse adds of
	// its key, as live entries do. Defaults to false.
	BlockFailed bool

	// Backend stores the entries. Defaults to NewMemory[T, K]().
	Backend Backend[T, K]

	// Lease is how long a run may go without a heartbeat (Job.Heartbeat)
	// before a reaper (package recovery) may rescue it: its context is
	// cancelled and the entry runs again without spending an attempt. A
	// lease starts when the entry is dispatched and again when its run
	// starts. Defaults to 5 minutes; without a reaper nothing is rescued.
	Lease time.Duration

	// AutoRenew renews the lease of every run while its handler has not
	// returned, at each pass of the reaper: then only a process that stops
	// beating (a crash, with a shared backend) loses its runs, and a handler
	// that hangs is never rescued. Defaults to false: handlers call
	// Job.Heartbeat.
	AutoRenew bool

	// MaxRescues is how many times an entry may be rescued: the next rescue
	// poisons it. Defaults to 3; negative is invalid.
	MaxRescues int
}

const (
	defaultBatch      = 16
	maxBatch          = 4096
	defaultMaxReruns  = 25
	defaultMaxRescues = 3
	defaultLease      = 5 * time.Minute
)

// Queue is a named queue of jobs with payloads of type T and distinct keys
// of type K, registered on a Scheduler by NewQueue. All methods are safe
// for concurrent use.
type Queue[T any, K comparable] struct {
	queueBase
	handler  Handler[T, K]
	keyOf    func(T) K
	groupOf  func(T) string
	keyKind  keys.Kind
	policy   RetryPolicy
	maxRerun int
	backend  Backend[T, K]
	// mem is backend if it is a *Memory, which AddAll adds to several
	// entries at a time (not a type that embeds one: its Add may do more).
	mem *Memory[T, K]
	// entryBufs keeps AddAll's buffers of new entries.
	entryBufs entryBufs[T, K]
	batches   batchPool[T, K]
}

// queueBase is the part of a queue the scheduler sees whatever its types.
type queueBase struct {
	s        *Scheduler
	name     string
	priority int
	batch    int
	weight   governor.Weight
	grouped  bool

	paused   atomic.Bool
	maxConc  atomic.Int64 // 0: no bound
	inflight atomic.Int64 // entries claimed and not settled
	running  atomic.Int64 // entries started and not settled
	limiter  atomic.Pointer[rate.Limiter]

	// dmu serialises the dispatches of the queue, so that the cap and the
	// rate limit are checked and consumed together; dispatching is set
	// while a loop holds it, so that other loops pick other queues rather
	// than wait for it.
	dmu         sync.Mutex
	dispatching atomic.Bool
	// admitting is set while a goroutine of awaitAdmission waits in the
	// governor's line for the queue, so that the loops pick other queues.
	admitting atomic.Bool

	// notified counts the backend's notifications; drained is the count
	// seen before the last take that found nothing more to take. The queue
	// may have entries ready while notified > drained.
	notified atomic.Uint64
	drained  atomic.Uint64
	// due is when the earliest delayed entry is due (nanoseconds since the
	// scheduler's epoch), or
	// 0: the timekeeper promotes it then. dueMu orders its updates.
	due   atomic.Int64
	dueMu sync.Mutex

	// blockedUntil skips the queue until then (nil: not) after a
	// dependency's fault (see leaveAlone): an instant of the Clock, not
	// nanoseconds since the epoch, which cannot tell a second later from
	// now once the Clock is past the instants it holds.
	blockedUntil atomic.Pointer[time.Time]
	retention    Retention
	lease        time.Duration
	autoRenew    bool
	maxRescues   int

	// Fairness, under the scheduler's mu: see pick.
	pass     float64       // virtual time: slot-time used per unit of weight
	avgRun   time.Duration // moving average of a run's duration
	wasReady bool          // ready at the last pick

	metrics *queueMetrics // nil when metrics are off
	window  window        // runs that ended over the last minute
	ended   atomic.Uint64 // runs that ended, ever
}

// NewQueue registers a queue named name (1 to 200 bytes of UTF-8) on s. It
// returns an error wrapping ErrInvalid for an invalid name or config, ErrDuplicateQueue if the name
// is taken, and ErrStopped once s was stopped. Queues may be registered
// before or after Start. A NewQueue refused for its name or a stopped s
// neither opens cfg.Backend nor asks the metrics provider for anything; one
// that s's Stop overtakes once it opened the Backend returns the queue,
// whose adds return ErrStopped.
func NewQueue[T any, K comparable](s *Scheduler, name string, cfg QueueConfig[T, K]) (*Queue[T, K], error) {
	if err := s.made(); err != nil {
		return nil, err
	}
	// The name first: a name taken (or a stopped scheduler) is refused
	// before the queue's metrics are made or its backend opened.
	if err := s.reserve(name); err != nil {
		return nil, err
	}
	registered := false
	defer func() {
		if !registered { // an error, or a panic of the Backend's Open or the metrics provider
			s.unreserve(name)
		}
	}()
	q := &Queue[T, K]{handler: cfg.Handler, keyOf: cfg.Key, groupOf: cfg.Group, keyKind: keys.Of[K]()}
	if err := q.configure(s, name, &cfg); err != nil {
		return nil, err
	}
	if err := q.backend.Open(QueueInfo{
		Name: name, Notify: q.notify, Retention: *cfg.Retention,
		BlockFailed: cfg.BlockFailed, Grouped: cfg.Group != nil,
	}); err != nil {
		return nil, err
	}
	q.batches.max = s.cfg.Workers + s.cfg.Loops
	registered = true
	s.register(q)
	return q, nil
}

// configure validates cfg, fills in its defaults and sets q up from it.
func (q *Queue[T, K]) configure(s *Scheduler, name string, cfg *QueueConfig[T, K]) error {
	switch {
	case name == "" || len(name) > 200 || !utf8.ValidString(name):
		return fmt.Errorf("%w: queue name %q (1 to 200 bytes of UTF-8)", ErrInvalid, name)
	case cfg.Handler == nil:
		return fmt.Errorf("%w: queue %q has no Handler", ErrInvalid, name)
	case cfg.Key == nil && reflect.TypeFor[T]() != reflect.TypeFor[K]():
		return fmt.Errorf("%w: queue %q needs a Key function: its payload type %v is not its key type %v",
			ErrInvalid, name, reflect.TypeFor[T](), reflect.TypeFor[K]())
	case cfg.Priority != 0 && (cfg.Priority < MinPriority || cfg.Priority > MaxPriority):
		return fmt.Errorf("%w: queue %q Priority %d not in [%d, %d]", ErrInvalid, name, cfg.Priority, MinPriority, MaxPriority)
	case cfg.MaxConcurrency < 0:
		return fmt.Errorf("%w: queue %q MaxConcurrency %d < 0", ErrInvalid, name, cfg.MaxConcurrency)
	case cfg.BatchSize < 0 || cfg.BatchSize > maxBatch:
		return fmt.Errorf("%w: queue %q BatchSize %d not in [0, %d]", ErrInvalid, name, cfg.BatchSize, maxBatch)
	case cfg.MaxReruns < 0:
		return fmt.Errorf("%w: queue %q MaxReruns %d < 0", ErrInvalid, name, cfg.MaxReruns)
	case cfg.MaxRescues < 0:
		return fmt.Errorf("%w: queue %q MaxRescues %d < 0", ErrInvalid, name, cfg.MaxRescues)
	case cfg.Lease < 0:
		return fmt.Errorf("%w: queue %q Lease %v < 0", ErrInvalid, name, cfg.Lease)
	}
	lim, err := newLimiter(cfg.Rate, cfg.Burst)
	if err != nil {
		return fmt.Errorf("queue %q: %w", name, err)
	}
	if cfg.Priority == 0 {
		cfg.Priority = MinPriority
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = defaultBatch
	}
	if cfg.MaxReruns == 0 {
		cfg.MaxReruns = defaultMaxReruns
	}
	if cfg.MaxRescues == 0 {
		cfg.MaxRescues = defaultMaxRescues
	}
	if cfg.Lease == 0 {
		cfg.Lease = defaultLease
	}
	q.policy = DefaultRetry
	if cfg.Retry != nil {
		if err := cfg.Retry.Validate(); err != nil {
			return fmt.Errorf("queue %q: %w", name, err)
		}
		q.policy = *cfg.Retry
	}
	if cfg.Retention == nil {
		cfg.Retention = s.cfg.Retention
	} else if err := cfg.Retention.validate(); err != nil {
		return fmt.Errorf("queue %q: %w", name, err)
	}
	if cfg.Backend == nil {
		cfg.Backend = NewMemory[T, K]()
	}
	q.s, q.name, q.priority, q.batch, q.weight = s, name, cfg.Priority, cfg.BatchSize, cfg.Weight
	q.grouped, q.maxRerun, q.backend = cfg.Group != nil, cfg.MaxReruns, cfg.Backend
	q.mem, _ = cfg.Backend.(*Memory[T, K])
	q.retention = *cfg.Retention
	q.lease, q.autoRenew, q.maxRescues = cfg.Lease, cfg.AutoRenew, cfg.MaxRescues
	q.maxConc.Store(int64(cfg.MaxConcurrency))
	q.limiter.Store(lim)
	if s.cfg.Metrics != nil {
		m, err := newQueueMetrics(s.cfg.Metrics, name, s.log)
		if err != nil {
			return fmt.Errorf("queue %q: %w", name, err)
		}
		q.metrics = m
	}
	return nil
}

// newLimiter returns a token bucket for r entries a second with bursts of
// burst, nil for no limit, or an error for invalid values.
func newLimiter(r float64, burst int) (*rate.Limiter, error) {
	switch {
	case !(r >= 0) || math.IsInf(r, 1):
		return nil, fmt.Errorf("%w: Rate %v is not a finite number ≥ 0", ErrInvalid, r)
	case burst < 0:
		return nil, fmt.Errorf("%w: Burst %d < 0", ErrInvalid, burst)
	case r == 0 && burst > 0:
		return nil, fmt.Errorf("%w: Burst %d without a Rate", ErrInvalid, burst)
	case r == 0:
		return nil, nil
	}
	if burst == 0 {
		// A second's worth, within int32 (converting a float past the
		// int range is not defined).
		burst = int(max(1, min(math.Ceil(r), math.MaxInt32)))
	}
	return rate.NewLimiter(rate.Limit(r), burst), nil
}

// Name returns the queue's name.
func (q *Queue[T, K]) Name() string { return q.name }

// AddOption modifies one Add. Make them with At, After, WithPriority,
// WithRetry and Disabled.
type AddOption struct {
	kind     optionKind
	at       time.Time
	after    time.Duration
	priority int
	retry    RetryPolicy
}

type optionKind uint8

const (
	optAt optionKind = iota + 1
	optAfter
	optPriority
	optRetry
	optDisabled
)

// At adds the entry delayed until t: it becomes pending at t (at once if t
// has passed). The scheduler and the in-memory backend keep instants as
// int64 nanoseconds from a century before the first they see: a t more
// than about 190 years later (as from After, Snooze or a retry delay of
// centuries) is kept as the last instant they can hold, and still waits.
func At(t time.Time) AddOption { return AddOption{kind: optAt, at: t} }

// After adds the entry delayed by d (not at all if d ≤ 0).
func After(d time.Duration) AddOption { return AddOption{kind: optAfter, after: d} }

// WithPriority adds the entry with priority p, in [MinPriority,
// MaxPriority], instead of the queue's.
func WithPriority(p int) AddOption { return AddOption{kind: optPriority, priority: p} }

// WithRetry adds the entry with its own retry policy.
func WithRetry(p RetryPolicy) AddOption { return AddOption{kind: optRetry, retry: p} }

// Disabled adds the entry disabled: it is never dispatched until enabled.
func Disabled() AddOption { return AddOption{kind: optDisabled} }

// key returns the distinct key of payload v.
func (q *Queue[T, K]) key(v T) K {
	if q.keyOf != nil {
		return q.keyOf(v)
	}
	return *(*K)(unsafe.Pointer(&v)) // T is K: checked by NewQueue
}

// Add adds a job with payload v. It returns the new entry's ID and true;
// or, if an entry with v's key is live (delayed, pending, awaiting or
// running, and failed with BlockFailed), that entry's ID and false.
//
// It returns an error wrapping ErrInvalid for a nil ctx, an invalid key
// (NaN, or unhashable), a Key or Group function that panics on v, or an
// invalid option; ctx's error for a done ctx; ErrStopped once the
// scheduler was stopped; and the backend's error if it fails; nothing is
// added then.
func (q *Queue[T, K]) Add(ctx context.Context, v T, opts ...AddOption) (ID, bool, error) {
	if err := q.made(); err != nil {
		return 0, false, err
	}
	if err := q.s.checkAdd(ctx); err != nil {
		return 0, false, err
	}
	var e NewEntry[T, K]
	if err := q.newEntry(&e, v, opts, time.Time{}); err != nil {
		return 0, false, err
	}
	// Not add(ctx, &e): the backend gets its copy of e straight from this
	// frame, where through a pointer it went through a temporary first.
	id, added, err := q.backend.Add(ctx, e)
	if err != nil || !added {
		return id, added, err
	}
	q.added(&e)
	return id, true, nil
}

func (q *Queue[T, K]) add(ctx context.Context, e *NewEntry[T, K]) (ID, bool, error) {
	id, added, err := q.backend.Add(ctx, *e)
	if err != nil || !added {
		return id, added, err
	}
	q.added(e)
	return id, true, nil
}

// added is what an add does once the backend added e.
func (q *Queue[T, K]) added(e *NewEntry[T, K]) {
	if e.RunAt.After(e.Now) {
		q.lowerDue(e.RunAt)
	}
	if m := q.metrics; m != nil {
		m.added()
	}
}

// keyAndGroup returns v's key and group. A panic of the queue's Key or
// Group function is an error wrapping ErrInvalid; without either function
// nothing can panic and no recover is set up.
func (q *Queue[T, K]) keyAndGroup(v T) (k K, group string, err error) {
	if q.keyOf == nil && q.groupOf == nil {
		return q.key(v), "", nil
	}
	returned := false
	defer func() {
		// Not returned with recover nil: under GODEBUG=panicnil=1, a
		// panic(nil), which recover cannot tell from none (or a Goexit,
		// which ends the caller's goroutine all the same).
		if r := recover(); r != nil || !returned {
			err = fmt.Errorf("%w: the queue's Key or Group function panicked: %s", ErrInvalid, panicval.String(r))
		}
	}()
	k = q.key(v)
	if q.groupOf != nil {
		group = q.groupOf(v)
	}
	returned = true
	return k, group, nil
}

// newEntry fills in e for payload v with opts, added at now, or if now is
// zero at the Clock's time once the key and group are known.
func (q *Queue[T, K]) newEntry(e *NewEntry[T, K], v T, opts []AddOption, now time.Time) error {
	k, group, err := q.keyAndGroup(v)
	if err != nil {
		return err
	}
	if !keys.Valid(q.keyKind, k) {
		return fmt.Errorf("%w: key %s is not equal to itself or cannot be hashed", ErrInvalid, keys.Describe(k))
	}
	if now.IsZero() {
		now = q.s.clock.Now()
	}
	// Field by field, as batch.start fills a Job: a composite literal
	// is built aside and copied in.
	e.Key, e.Payload, e.Priority, e.Group, e.Now = k, v, q.priority, group, now
	e.RunAt, e.Disabled, e.Retry = time.Time{}, false, nil
	for i := range opts {
		o := &opts[i]
		switch o.kind {
		case optAt:
			e.RunAt = o.at
		case optAfter:
			e.RunAt = now.Add(o.after)
		case optPriority:
			if o.priority < MinPriority || o.priority > MaxPriority {
				return fmt.Errorf("%w: priority %d not in [%d, %d]", ErrInvalid, o.priority, MinPriority, MaxPriority)
			}
			e.Priority = o.priority
		case optRetry:
			if err := o.retry.Validate(); err != nil {
				return err
			}
			r := o.retry // a copy: the caller's options are theirs
			e.Retry = &r
		case optDisabled:
			e.Disabled = true
		default:
			return fmt.Errorf("%w: zero AddOption", ErrInvalid)
		}
	}
	return nil
}

// Result is the outcome of one add of AddAll.
type Result struct {
	// ID is the new entry's, or that of the live entry that blocked it.
	ID ID
	// Added reports whether an entry was added.
	Added bool
}

// AddAll adds a job for each payload, with the same options, and returns a
// result for each, in order. On an error it returns the results of the
// payloads added (or refused as duplicates) before it, in order, and no
// later payload is added: on Add's error for a payload, every payload
// before it has a result; on ctx's, or on ErrStopped once the scheduler
// stops midway, the payloads of the chunk (below) being built may have
// none, and were not added.
//
// A payload whose key is that of a payload before it in vs is a duplicate
// of that one's entry, as it would be in as many calls of Add. AddAll
// works in chunks of up to 64 payloads: the queue's Key and Group
// functions are called for a chunk's payloads before any of them is added
// (an add that one of them makes comes first), the chunk's entries share
// their enqueue time, one reading of the Clock, and Memory (the default
// backend) adds them under one hold of its lock, so that AddAll costs its
// caller less per job than Add does (BenchmarkQueue_AddPaused).
func (q *Queue[T, K]) AddAll(ctx context.Context, vs []T, opts ...AddOption) ([]Result, error) {
	if err := q.made(); err != nil {
		return nil, err
	}
	if err := q.s.checkAdd(ctx); err != nil {
		return nil, err
	}
	out := make([]Result, 0, len(vs))
	buf := q.entryBufs.get()
	// buf[:used] may hold payloads, which are the caller's: the pool must
	// not keep them, also if a Key function ends the goroutine midway.
	used := 0
	defer func() {
		clear(buf[:used])
		q.entryBufs.put(buf)
	}()
	for len(vs) > 0 {
		n := min(len(vs), len(buf))
		var now time.Time
		var err error
		for i := range n {
			// ctx and Stop are looked at before each payload, as Add
			// would: a Key function may end ctx or stop the scheduler.
			if err = q.s.checkAdd(ctx); err == nil {
				if i == 0 {
					now = q.s.clock.Now()
				}
				used = max(used, i+1)
				err = q.newEntry(&buf[i], vs[i], opts, now)
			}
			if err != nil {
				n = i
				break
			}
		}
		// Stop may have begun while the Key and Group functions ran: the
		// chunk is not added then, so that no more can land after Stop
		// than one Add's.
		if n > 0 && q.s.stopping.Load() {
			return out, ErrStopped
		}
		var addErr error
		out, addErr = q.addEntries(ctx, buf[:n], out)
		if addErr != nil {
			return out, addErr
		}
		if err != nil {
			return out, err
		}
		vs = vs[n:]
	}
	return out, nil
}

// addEntries adds es, in one call if the backend is a Memory, else one by
// one, and appends a result for each entry added or refused.
func (q *Queue[T, K]) addEntries(ctx context.Context, es []NewEntry[T, K], out []Result) ([]Result, error) {
	if q.mem == nil {
		for i := range es {
			id, added, err := q.add(ctx, &es[i])
			if err != nil {
				return out, err
			}
			out = append(out, Result{id, added})
		}
		return out, nil
	}
	from := len(out)
	out, err := q.mem.addAll(ctx, es, out)
	for i, r := range out[from:] {
		if r.Added {
			q.added(&es[i])
		}
	}
	return out, err
}

// entryBufs keeps the buffers of NewEntry with which AddAll builds the
// entries it adds: a sync.Pool, as AddAll may be called from any number
// of goroutines at once.
type entryBufs[T any, K comparable] struct{ p sync.Pool }

// entryBuf is how many entries AddAll builds before it adds them: as many
// as Memory adds under one hold of its lock.
const entryBuf = addChunk

func (b *entryBufs[T, K]) get() []NewEntry[T, K] {
	if p, ok := b.p.Get().(*[entryBuf]NewEntry[T, K]); ok {
		return p[:]
	}
	return new([entryBuf]NewEntry[T, K])[:]
}

func (b *entryBufs[T, K]) put(s []NewEntry[T, K]) { b.p.Put((*[entryBuf]NewEntry[T, K])(s)) }

// notify is the backend's QueueInfo.Notify.
func (q *Queue[T, K]) notify() {
	q.notified.Add(1)
	q.s.wakeLoops()
}

// lowerDue makes the queue's due time at most t, and wakes the timekeeper
// if it would sleep past it.
func (q *queueBase) lowerDue(t time.Time) {
	ns := q.s.ns(t)
	q.dueMu.Lock()
	if d := q.due.Load(); d == 0 || ns < d {
		q.due.Store(ns)
	}
	q.dueMu.Unlock()
	q.s.wakeTimekeeper(ns)
}

// promote makes the queue's due entries pending at now and returns when the
// next one is due, in nanoseconds since the epoch (0: none) and as the
// backend said it (zero: none), which the epoch may not tell from now (see
// Scheduler.timekeeper).
func (q *Queue[T, K]) promote(ctx context.Context, now time.Time) (int64, time.Time) {
	due, t, err := q.promoteDue(ctx, now)
	if err != nil {
		// Once dueMu is let go: the Logger may hang, and every delayed
		// add, and every settlement of a retry or a snooze, takes it.
		q.s.warn("backend Promote failed", q.name, err)
	}
	return due, t
}

// promoteDue is promote under dueMu, returning the backend's error.
func (q *Queue[T, K]) promoteDue(ctx context.Context, now time.Time) (int64, time.Time, error) {
	q.dueMu.Lock()
	defer q.dueMu.Unlock()
	t, ok, err := q.backend.Promote(ctx, now)
	switch {
	case err != nil:
		// The due time has passed: tried again in a second, not at once
		// in a hot loop.
		t = now.Add(time.Second)
		return q.s.ns(t), t, err
	case ok:
		q.due.Store(q.s.ns(t))
	default:
		q.due.Store(0)
		t = time.Time{}
	}
	return q.due.Load(), t, nil
}

// reserveRun counts one more run in q.running and reports true, or false
// if as many entries run as the cap allows: a worker starts no further
// entry of its batch then (the cap may have been lowered since the batch
// was taken, so that the batches claimed hold more entries than it
// allows). The check and the count are one step: two workers that checked
// and then counted apart both started an entry, once, one past the cap.
func (q *queueBase) reserveRun() bool {
	for {
		c, n := q.maxConc.Load(), q.running.Load()
		if c > 0 && n >= c {
			return false
		}
		if q.running.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// errQueueNotMade is the error of a method of a Queue not made by NewQueue.
var errQueueNotMade = fmt.Errorf("%w: a Queue not made by NewQueue (a nil or zero Queue)", ErrInvalid)

// made returns errQueueNotMade if q was not made by NewQueue.
func (q *Queue[T, K]) made() error {
	if q == nil || q.s == nil {
		return errQueueNotMade
	}
	return nil
}

// check returns the error of a call under ctx: q's, if it was not made by
// NewQueue, or ctx's (see checkCtx).
func (q *Queue[T, K]) check(ctx context.Context) error {
	if err := q.made(); err != nil {
		return err
	}
	return checkCtx(ctx)
}

// Pause stops dispatching the queue's entries: queued entries stay, running
// ones finish. Pause is idempotent.
func (q *Queue[T, K]) Pause() { q.paused.Store(true) }

// Resume dispatches the queue's entries again after Pause.
func (q *Queue[T, K]) Resume() {
	q.paused.Store(false)
	if q.s != nil {
		q.s.wakeLoops()
	}
}

// Paused reports whether the queue is paused.
func (q *Queue[T, K]) Paused() bool { return q.paused.Load() }

// SetMaxConcurrency changes the queue's MaxConcurrency. Entries already
// running are not stopped; a lower bound applies as they finish.
func (q *Queue[T, K]) SetMaxConcurrency(n int) error {
	if err := q.made(); err != nil {
		return err
	}
	if n < 0 {
		return fmt.Errorf("%w: MaxConcurrency %d < 0", ErrInvalid, n)
	}
	q.maxConc.Store(int64(n))
	q.s.wakeLoops()
	return nil
}

// SetRate changes the queue's rate limit (see QueueConfig.Rate); 0 removes
// it. The bucket starts full.
func (q *Queue[T, K]) SetRate(r float64, burst int) error {
	if err := q.made(); err != nil {
		return err
	}
	lim, err := newLimiter(r, burst)
	if err != nil {
		return err
	}
	q.limiter.Store(lim)
	q.s.wakeLoops()
	return nil
}

// Disable keeps the live entry with the ID from being dispatched until
// Enable; it keeps blocking adds of its key. Enable makes it dispatchable
// again (at the tail of its priority, if it is pending).
func (q *Queue[T, K]) Disable(ctx context.Context, id ID) error {
	if err := q.check(ctx); err != nil {
		return err
	}
	return q.backend.SetDisabled(ctx, id, true)
}

// Enable undoes Disable.
func (q *Queue[T, K]) Enable(ctx context.Context, id ID) error {
	if err := q.check(ctx); err != nil {
		return err
	}
	return q.backend.SetDisabled(ctx, id, false)
}

// Counts returns the numbers of the queue's entries in each state.
func (q *Queue[T, K]) Counts(ctx context.Context) (Counts, error) {
	if err := q.check(ctx); err != nil {
		return Counts{}, err
	}
	return q.backend.Counts(ctx)
}

// Get returns the entry with the ID, or ErrNotFound.
func (q *Queue[T, K]) Get(ctx context.Context, id ID) (Entry[T, K], error) {
	if err := q.check(ctx); err != nil {
		return Entry[T, K]{}, err
	}
	return q.backend.Get(ctx, id)
}

// dispatch takes up to n entries, a batch, for a worker that holds permit,
// within the queue's cap and rate limit; pick charged the queue charged for
// it. It returns the batch, or nil with nothing taken.
func (q *Queue[T, K]) dispatch(ctx context.Context, now time.Time, permit governor.Permit, charged time.Duration, n int) work {
	q.dmu.Lock()
	q.dispatching.Store(true)
	defer func() {
		q.dispatching.Store(false)
		q.dmu.Unlock()
	}()
	max := n
	if c := q.maxConc.Load(); c > 0 {
		room := c - q.inflight.Load()
		if room <= 0 {
			return nil
		}
		max = int(min(int64(max), room))
	}
	lim := q.limiter.Load()
	if lim != nil {
		tokens := lim.TokensAt(now)
		if tokens < 1 {
			return nil
		}
		max = int(min(float64(max), math.Floor(tokens)))
	}
	b := q.batches.get(q)
	sc := scope.New()
	took := false
	defer func() {
		if v := recover(); v != nil || !took {
			// The backend panicked or ended the goroutine (see
			// Scheduler.dispatch): whatever it claimed goes back when the
			// scope closes.
			_ = sc.Close(scope.Failed(fmt.Errorf("sched: backend panicked: %s", panicval.String(exitValue(v)))))
			if v != nil {
				panic(v)
			}
		}
	}()
	seen := q.notified.Load()
	req := TakeRequest{Now: now, Max: max}
	if q.lease > 0 {
		req.LeaseUntil = now.Add(q.lease)
	}
	claims, err := q.backend.Take(ctx, sc, req, b.claims[:0])
	took = true
	switch {
	case err != nil:
		// Not drained: what is pending is still there, and is taken
		// once the queue has been left alone for a second.
		q.s.warn("backend Take failed", q.name, err)
		q.leaveAlone()
	case len(claims) == 0 || (len(claims) < max && !q.grouped):
		q.drained.Store(seen)
	}
	if len(claims) == 0 {
		_ = sc.Close(scope.Succeeded())
		q.batches.put(b)
		return nil
	}
	if lim != nil {
		lim.AllowN(now, len(claims))
	}
	q.inflight.Add(int64(len(claims)))
	b.begin(sc, claims, permit, now, charged, q.s.rescue.Load())
	q.s.enlive(b)
	return b
}
