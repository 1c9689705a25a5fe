package recovery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/jobkit/jobkit/internal/isolate"
	"github.com/jobkit/jobkit/internal/panicval"
	"github.com/jobkit/jobkit/internal/stack"
	"github.com/jobkit/jobkit/sched"
)

// ErrStopped is returned by Start after Stop.
var ErrStopped = errors.New("recovery: stopped")

// Config configures a Reaper. The zero Config is valid.
type Config struct {
	// Interval is how often the reaper looks. Defaults to one second; at
	// least a millisecond.
	Interval time.Duration

	// Grace is how long past the end of its lease a run is left before it
	// is rescued: a run is rescued no sooner than lease + Grace after its
	// last heartbeat, and no later than one Interval after that. Defaults
	// to Interval; not negative.
	Grace time.Duration

	// TakenThreshold: an entry that a look finds awaiting a worker or
	// running, taken more than this many times with that run (its runs:
	// retries and reruns count), raises an alert. A look sees only the
	// runs in progress at its moment: an entry whose runs all fall between
	// looks (a quick handler retried after a backoff) raises none. Defaults
	// to 10; negative turns the alert off.
	TakenThreshold int

	// StallThreshold: a queue with at least this many entries waiting to run
	// while none of its runs ended during a whole Interval, though some are
	// running, raises an alert. Defaults to 100; negative turns it off.
	StallThreshold int

	// OnAlert, if not nil, is called with each alert, in the goroutine of
	// the look that raised it: the reaper's, or that of a caller of Look.
	// It must not block for long (a panic in it is logged and the look goes
	// on; if it calls runtime.Goexit, that is logged and, in the reaper's
	// goroutine, a new goroutine of the reaper's goes on, while a caller's
	// Look ends with the caller's goroutine). Alerts are logged too.
	OnAlert func(Alert)

	// Metrics, if not nil, counts rescues, poisonings and alerts by queue.
	// A provider or counter that panics, or calls runtime.Goexit, switches
	// them off (one error is logged); the look and the reaper go on. They
	// are called on a goroutine of their own that the look waits for.
	Metrics MetricsProvider

	// Logger receives the alerts (warnings) and rescues (info). Defaults to
	// the scheduler's logger. Each record is handled on a goroutine of its
	// own that the reaper waits for, so that a handler that panics or calls
	// runtime.Goexit loses its record and nothing else.
	Logger *slog.Logger
}

// MetricsProvider makes the reaper's metrics for a queue; the metric types
// are the scheduler's. The reaper calls it at a queue's first rescue or
// alert, without its lock; two looks at once (the reaper's and a Look of
// the user's) may both call it for one queue, and the first metrics kept
// serve, so a method must return the same metric for the same queue, as
// the Prometheus adapter's do.
type MetricsProvider interface {
	NewRescuesMetric(queue string) sched.CounterMetric
	NewPoisonedMetric(queue string) sched.CounterMetric
	NewAlertsMetric(queue string) sched.CounterMetric
}

// AlertKind says what an alert is about.
type AlertKind uint8

const (
	// TakenTooOften: an entry a look found awaiting or running was taken
	// more than TakenThreshold times.
	TakenTooOften AlertKind = iota + 1
	// Stalled: entries wait while no run of the queue ends.
	Stalled
)

// String returns "taken too often" or "stalled".
func (k AlertKind) String() string {
	switch k {
	case TakenTooOften:
		return "taken too often"
	case Stalled:
		return "stalled"
	}
	return fmt.Sprintf("AlertKind(%d)", uint8(k))
}

// Alert is something an operator should look at.
type Alert struct {
	Kind  AlertKind
	Queue string
	// ID and Taken, for TakenTooOften: the entry and how many times it was
	// taken. Waiting and Running, for Stalled: the queue's entries waiting
	// to run and running.
	ID               sched.ID
	Taken            int
	Waiting, Running int
	At               time.Time
}

// String describes the alert in one line. A queue name with characters
// that are not printable (a line break, say) is quoted, as %q quotes it.
func (a Alert) String() string {
	queue := a.Queue
	if strings.ContainsFunc(queue, func(r rune) bool { return !unicode.IsPrint(r) }) {
		queue = strconv.Quote(queue)
	}
	if a.Kind == TakenTooOften {
		return fmt.Sprintf("%s/%d taken %d times", queue, a.ID, a.Taken)
	}
	return fmt.Sprintf("%s: %d entries waiting, %d running, none ended", queue, a.Waiting, a.Running)
}

// Stats are a reaper's counts since it started.
type Stats struct {
	// Rescued counts the claims taken back, the poisoned ones included;
	// Poisoned those of them that ended poisoned, not to run again; Alerts
	// the alerts raised.
	Rescued, Poisoned, Alerts int
	// Abandoned is the number of rescued handlers that have not returned
	// yet (Go cannot stop them): each holds a goroutine.
	Abandoned int
}

// Reaper rescues the stuck runs of a scheduler's queues: once an Interval
// it renews the leases of auto-renewed runs and rescues those whose lease
// lapsed (see sched.Inspector.Reap), and raises alerts.
//
// A Reaper is made by New; all its methods are safe for concurrent use.
// New starts nothing; Start starts its one goroutine and Stop waits for it.
// A Reaper not made by New (the zero value, a literal) has no scheduler:
// Start refuses it with an error wrapping sched.ErrInvalid, Look does
// nothing, Stats is zero and Stop returns nil.
type Reaper struct {
	s    *sched.Scheduler
	in   *sched.Inspector
	cfg  Config
	life sync.Mutex // serialises Start and Stop
	// cancel cancels the loop's context, which the Reaper owns; done is
	// closed when the loop has returned.
	cancel  context.CancelFunc
	done    chan struct{}
	stopped bool

	metricsOff atomic.Bool // set once a metric panicked

	// taking is held (a token in a channel, so that a look waiting for it
	// heeds its context) by the look that lists the runs in progress for
	// TakenTooOften and forgets the alerts of runs no longer seen: see
	// checkTaken.
	taking chan struct{}

	mu      sync.Mutex // guards the fields below
	stats   Stats
	alerted map[alertKey]bool  // taken-too-often alerts already raised
	ended   map[string]endedAt // the runs each queue had ended at the last look, and since when
	stalled map[string]bool    // queues stalled at the last look: alerted once
	metrics map[string]*queueMetrics
}

// endedAt is the number of runs a queue had ended when a look saw it, and
// the time of the look that first saw that number.
type endedAt struct {
	n     uint64
	since time.Time
}

type alertKey struct {
	queue string
	id    sched.ID
	taken int
}

type queueMetrics struct{ rescues, poisoned, alerts sched.CounterMetric }

// New returns a Reaper of s's queues, or an error wrapping sched.ErrInvalid
// for a nil s or an invalid cfg. It turns on s's per-batch contexts (see
// sched.Inspector.EnableRescue): call it before s.Start, so that every run
// can be cancelled when rescued.
func New(s *sched.Scheduler, cfg Config) (*Reaper, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: nil scheduler", sched.ErrInvalid)
	}
	switch {
	case cfg.Interval == 0:
		cfg.Interval = time.Second
	case cfg.Interval < time.Millisecond:
		return nil, fmt.Errorf("%w: Interval %v below 1ms", sched.ErrInvalid, cfg.Interval)
	}
	switch {
	case cfg.Grace == 0:
		cfg.Grace = cfg.Interval
	case cfg.Grace < 0:
		return nil, fmt.Errorf("%w: Grace %v < 0", sched.ErrInvalid, cfg.Grace)
	}
	if cfg.TakenThreshold == 0 {
		cfg.TakenThreshold = 10
	}
	if cfg.StallThreshold == 0 {
		cfg.StallThreshold = 100
	}
	if cfg.Logger == nil {
		cfg.Logger = s.Logger()
	}
	in := s.Inspector()
	in.EnableRescue()
	return &Reaper{
		s: s, in: in, cfg: cfg,
		alerted: make(map[alertKey]bool),
		taking:  make(chan struct{}, 1),
		ended:   make(map[string]endedAt),
		stalled: make(map[string]bool),
		metrics: make(map[string]*queueMetrics),
	}, nil
}

// Start starts the reaper's goroutine, which looks once an Interval until
// Stop. A second call does nothing; after Stop it returns ErrStopped.
func (r *Reaper) Start(ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("%w: nil context", sched.ErrInvalid)
	}
	if r.s == nil { // its goroutine would crash the process on the nil scheduler
		return fmt.Errorf("%w: a Reaper not made by New", sched.ErrInvalid)
	}
	r.life.Lock()
	defer r.life.Unlock()
	switch {
	case r.stopped:
		return ErrStopped
	case r.done != nil:
		return nil
	}
	loopCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.cancel, r.done = cancel, make(chan struct{})
	go r.loop(loopCtx, r.done)
	return nil
}

// Stop stops the reaper and waits for its goroutine, or until ctx is done.
// It is idempotent and safe without Start. It does not wait for abandoned
// handlers; called from OnAlert, a metric or the Logger's handler on the
// reaper's goroutine, it does not wait for the goroutine that calls it. It tells
// that goroutine by the functions on its stack, not by Reaper: an OnAlert
// of one Reaper that stops another does not wait either.
func (r *Reaper) Stop(ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("%w: nil context", sched.ErrInvalid)
	}
	r.life.Lock()
	r.stopped = true
	cancel, done := r.cancel, r.done
	r.life.Unlock()
	if done == nil {
		return nil
	}
	cancel()
	if stack.Within(func(fn string) bool { return fn == loopFunc || fn == forLoopFunc }) {
		return nil // called from OnAlert or the Logger: the loop ends when this returns
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// The names of loop and forLoop in stack traces.
const (
	loopFunc    = "github.com/jobkit/jobkit/recovery.(*Reaper).loop"
	forLoopFunc = "github.com/jobkit/jobkit/recovery.forLoop"
)

// Stats returns the reaper's counts.
func (r *Reaper) Stats() Stats {
	if r.in == nil { // not made by New
		return Stats{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.stats
	st.Abandoned = r.in.Abandoned()
	return st
}

// loop looks once an Interval until ctx is done, then closes done. If
// OnAlert or the Clock ends its goroutine (runtime.Goexit), which
// no deferred call can stop, a new loop takes its place: it holds nothing
// between looks, so nothing is lost but the rest of that look.
func (r *Reaper) loop(ctx context.Context, done chan<- struct{}) {
	normal := false
	defer func() {
		if normal {
			close(done)
			return
		}
		go r.loop(ctx, done)
	}()
	clock := r.s.Clock()
	timer := clock.NewTimer()
	defer func() { timer.Stop() }()
	broke := r.s.ClockBroken()
	for {
		timer.Reset(r.cfg.Interval)
		select {
		case <-ctx.Done():
			normal = true
			return
		case <-timer.C():
		case <-broke:
			// The scheduler's clock broke, and its timer may never fire:
			// wait the Interval again on a timer of the system clock.
			broke = nil
			timer.Stop()
			timer = clock.NewTimer()
			continue
		}
		r.Look(ctx)
	}
}

// Look does what the reaper does once an Interval, at once: it rescues the
// lapsed runs and raises alerts. The reaper's goroutine calls it; a test or
// an operator tool may too. A panic of a backend in a look is logged,
// and ends that look. Looks may overlap, except that one at a time
// lists the runs in progress for TakenTooOften: a Look waits for another's
// listing (not for its OnAlert calls), and skips that check if ctx ends
// meanwhile. It does nothing on a Reaper not made by New, nor with a nil
// context, which it logs as an error.
func (r *Reaper) Look(ctx context.Context) {
	if r.s == nil {
		return
	}
	if ctx == nil {
		r.log(slog.LevelError, "recovery: Look called with a nil context: nothing done")
		return
	}
	defer func() {
		// What panics here is a backend, through the Inspector (OnAlert's
		// and the metrics' panics are recovered where they are called):
		// logged, and the look ends, so that one broken backend takes
		// neither the reaper's goroutine nor the process down; the next
		// look tries again.
		if v := recover(); v != nil {
			r.log(slog.LevelError, "recovery: a look panicked (a backend, through the Inspector) and ended there",
				slog.String("panic", panicval.String(v)), slog.String("stack", string(debug.Stack())))
		}
	}()
	now := r.s.Clock().Now()
	rescued, err := r.in.Reap(ctx, now, r.cfg.Grace)
	if err != nil && ctx.Err() == nil {
		r.log(slog.LevelWarn, "recovery: reap failed", slog.Any("error", err))
	}
	for _, x := range rescued {
		r.mu.Lock()
		r.stats.Rescued++
		if x.Poisoned {
			r.stats.Poisoned++
		}
		r.mu.Unlock()
		r.count(x.Queue, func(m *queueMetrics) sched.CounterMetric { return m.rescues })
		if x.Poisoned {
			r.count(x.Queue, func(m *queueMetrics) sched.CounterMetric { return m.poisoned })
		}
		r.log(slog.LevelInfo, "recovery: rescued a run whose lease lapsed",
			slog.String("queue", x.Queue), slog.Uint64("id", uint64(x.ID)),
			slog.Bool("running", x.Running), slog.Bool("poisoned", x.Poisoned))
	}
	r.checkTaken(ctx, now)
	r.checkStalls(ctx, now)
}

// checkTaken alerts once for each entry taken more than TakenThreshold
// times, at each new count.
//
// One look at a time lists and forgets: a look that forgot every alert of
// a run its listing did not see would forget one that another look, which
// listed the run after it started, had just raised, and a third look would
// raise it again. The alerts are raised once the listing is done and the
// next look may list, so that an OnAlert that calls Look, or hangs, holds
// up no other look's listing.
func (r *Reaper) checkTaken(ctx context.Context, now time.Time) {
	if r.cfg.TakenThreshold < 0 {
		return
	}
	select {
	case r.taking <- struct{}{}:
	case <-ctx.Done():
		return
	}
	// fresh holds the alerts listTaken marked raised and not raised yet.
	// Should the look end before they are (a backend that panics as it
	// lists, runtime.Goexit in OnAlert), they are forgotten
	// again, so that the next look raises them, as it would had this
	// look not listed them.
	var fresh []Alert
	defer func() {
		if len(fresh) > 0 {
			r.mu.Lock()
			for _, a := range fresh {
				delete(r.alerted, alertKey{a.Queue, a.ID, a.Taken})
			}
			r.mu.Unlock()
		}
	}()
	r.listTaken(ctx, now, &fresh)
	for len(fresh) > 0 {
		a := fresh[0]
		fresh = fresh[1:]
		r.alert(a)
	}
}

// listTaken lists the runs in progress taken more than TakenThreshold
// times, appends to *fresh the alerts not raised yet for them, marked
// raised, and forgets those of runs no longer in progress. It holds
// r.taking, and lets go of it on its way out, even if the backend's List
// panics or ends the goroutine.
func (r *Reaper) listTaken(ctx context.Context, now time.Time, fresh *[]Alert) {
	defer func() { <-r.taking }()
	seen := make(map[alertKey]bool)
	q := sched.Query{States: []sched.State{sched.StateAwaiting, sched.StateRunning}}
	for e, err := range r.in.List(ctx, q) {
		if err != nil {
			return // nothing forgotten: the listing is not whole
		}
		taken := e.Attempts + e.Reruns + 1 // this run too
		if taken <= r.cfg.TakenThreshold {
			continue
		}
		k := alertKey{e.Queue, e.ID, taken}
		seen[k] = true
		r.mu.Lock()
		if !r.alerted[k] {
			r.alerted[k] = true
			*fresh = append(*fresh, Alert{Kind: TakenTooOften, Queue: e.Queue, ID: e.ID, Taken: taken, At: now})
		}
		r.mu.Unlock()
	}
	r.mu.Lock()
	for k := range r.alerted { // forget entries no longer running
		if !seen[k] {
			delete(r.alerted, k)
		}
	}
	r.mu.Unlock()
}

// checkStalls alerts for each queue with StallThreshold entries or more
// waiting (pending or awaiting a worker, and enabled), some running, and no
// run ended for a whole Interval: for as long as the looks since one that
// saw the same number of ended runs span an Interval. (Two looks close
// together, a Look of the user's beside the loop's, see no stall.) It
// alerts once when the stall begins. A stall ends when a run ends, the
// queue is paused or fewer entries wait; one that begins again alerts
// again.
func (r *Reaper) checkStalls(ctx context.Context, now time.Time) {
	if r.cfg.StallThreshold < 0 {
		return
	}
	sums, err := r.in.Summaries(ctx)
	if err != nil {
		return
	}
	for _, qs := range sums {
		waiting := qs.Counts.Pending + qs.Counts.Awaiting // disabled ones too, for now
		r.mu.Lock()
		last, seen := r.ended[qs.Name]
		ended := !seen || qs.Ended != last.n
		if ended || now.Before(last.since) {
			last = endedAt{n: qs.Ended, since: now}
			r.ended[qs.Name] = last
		}
		// The Interval is for a stall to begin: one that began goes on
		// until a run ends, though this look's time is less than an
		// Interval past since (the clock went back, or the look read it
		// before another look that saw the stall begin).
		long := seen && (now.Sub(last.since) >= r.cfg.Interval || !ended && r.stalled[qs.Name])
		stalled := long && qs.Counts.Running > 0 && waiting >= r.cfg.StallThreshold && !qs.Paused
		r.mu.Unlock()
		if stalled && qs.Counts.Disabled > 0 {
			// Counts.Disabled counts disabled entries in every state
			// (delayed ones, say): count those among the waiting, which
			// never run until enabled. Only a queue that looks stalled
			// pays for the listing.
			waiting -= r.disabledWaiting(ctx, qs.Name)
			stalled = waiting >= r.cfg.StallThreshold
		}
		r.mu.Lock()
		fresh := stalled && !r.stalled[qs.Name]
		r.stalled[qs.Name] = stalled
		r.mu.Unlock()
		if fresh {
			r.alert(Alert{Kind: Stalled, Queue: qs.Name, Waiting: waiting, Running: qs.Counts.Running, At: now})
		}
	}
}

// disabledWaiting counts the disabled entries of the queue named that are
// pending or awaiting a worker.
func (r *Reaper) disabledWaiting(ctx context.Context, queue string) int {
	n, _ := r.in.Count(ctx, sched.Query{
		Queues: []string{queue},
		States: []sched.State{sched.StatePending, sched.StateAwaiting},
		Match:  func(s *sched.Summary) bool { return s.Disabled },
	})
	return n
}

func (r *Reaper) alert(a Alert) {
	r.mu.Lock()
	r.stats.Alerts++
	r.mu.Unlock()
	r.count(a.Queue, func(m *queueMetrics) sched.CounterMetric { return m.alerts })
	r.log(slog.LevelWarn, "recovery: "+a.Kind.String(), slog.String("alert", a.String()))
	if r.cfg.OnAlert != nil {
		r.hook(a)
	}
}

// hook calls OnAlert, logging a panic of it rather than letting it end the
// reaper, or the process; and logging its runtime.Goexit, which ends the
// goroutine of the look: in the reaper's, a new loop goes on (see loop); a
// caller's Look does not return.
func (r *Reaper) hook(a Alert) {
	returned := false
	defer func() {
		switch v := recover(); {
		case v != nil:
			r.log(slog.LevelError, "recovery: OnAlert panicked", slog.String("panic", panicval.String(v)), slog.String("stack", string(debug.Stack())))
		case !returned:
			r.log(slog.LevelError, "recovery: OnAlert called runtime.Goexit, which ends the goroutine of the look: the reaper's own is replaced by a new one, a caller's Look does not return", slog.String("stack", string(debug.Stack())))
		}
	}()
	r.cfg.OnAlert(a)
	returned = true
}

// count increments the counter that pick selects among queue's metrics. A
// provider or a metric that panics or calls runtime.Goexit switches the
// reaper's metrics off, with one error logged: it never ends the look, the
// reaper or the process. A nil metric is skipped.
func (r *Reaper) count(queue string, pick func(*queueMetrics) sched.CounterMetric) {
	if r.cfg.Metrics == nil || r.metricsOff.Load() {
		return
	}
	// On a goroutine of its own, so that a runtime.Goexit ends that one,
	// not the look's: the look goes on to its log records, OnAlert and the
	// rest of its rescues.
	var fault any
	r.isolated(func() {
		returned := false
		defer func() {
			if v := recover(); v != nil {
				fault = v
			} else if !returned {
				fault = "runtime.Goexit"
			}
		}()
		if c := pick(r.metricsOf(queue)); c != nil {
			c.Inc()
		}
		returned = true
	})
	if fault != nil && r.metricsOff.CompareAndSwap(false, true) {
		r.log(slog.LevelError, "recovery: a metric panicked; the reaper's metrics are off", slog.String("panic", panicval.String(fault)))
	}
}

// metricsOf returns queue's metrics, made at the first use. The provider
// is the user's code and is called without r.mu: one that calls the
// Reaper back (Stats) would otherwise deadlock the reaper, and one that
// hangs would block every Stats. Of two looks that make a queue's metrics
// at once, the first to store them wins.
func (r *Reaper) metricsOf(queue string) *queueMetrics {
	r.mu.Lock()
	m := r.metrics[queue]
	r.mu.Unlock()
	if m != nil {
		return m
	}
	p := r.cfg.Metrics
	m = &queueMetrics{p.NewRescuesMetric(queue), p.NewPoisonedMetric(queue), p.NewAlertsMetric(queue)}
	r.mu.Lock()
	defer r.mu.Unlock()
	if first := r.metrics[queue]; first != nil {
		return first
	}
	r.metrics[queue] = m
	return m
}

// log hands a record to Config.Logger on a goroutine of its own and waits
// for it, so that a handler that panics or calls runtime.Goexit loses its
// record and does not end the reaper's look, or crash the process from the
// reaper's goroutine, where nothing recovers (the scheduler's own logger,
// the default, is guarded so already; a Logger of the Config is the user's).
// A record of the reaper's goroutine is handled under the frame forLoop, by
// which a Stop from the handler knows not to wait for the loop that waits
// for it, as a Stop from OnAlert. Records are rare: the stack walk and the
// goroutine cost nothing in the common case.
func (r *Reaper) log(level slog.Level, msg string, attrs ...slog.Attr) {
	r.isolated(func() { r.cfg.Logger.LogAttrs(context.Background(), level, msg, attrs...) })
}

// isolated calls f, the user's code, on a goroutine of its own and waits
// for it, reporting whether f returned: a panic or runtime.Goexit of f
// ends that goroutine and not the look's. A call of the reaper's goroutine
// is made under the frame forLoop, by which a Stop from f knows not to
// wait for the loop that waits for it.
func (r *Reaper) isolated(f func()) bool {
	if stack.Within(func(fn string) bool { return fn == loopFunc }) {
		return isolate.Call(func() { forLoop(f) })
	}
	return isolate.Call(f)
}

// forLoop calls f. It is the frame of a Logger call that the reaper's
// goroutine waits on.
//
//go:noinline
func forLoop(f func()) { f() }
