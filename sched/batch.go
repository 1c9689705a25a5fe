package sched

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jobkit/jobkit/governor"
	"github.com/jobkit/jobkit/internal/errchain"
	"github.com/jobkit/jobkit/internal/panicval"
	"github.com/jobkit/jobkit/internal/sat"
	"github.com/jobkit/jobkit/scope"
)

// work is what a scheduling loop hands to a worker.
type work interface {
	// run runs the work in the worker's goroutine, and reports whether it
	// was abandoned meanwhile: the goroutine must then not take more work.
	run() (abandoned bool)
	// wasAbandoned reports whether the work was abandoned, for a worker
	// whose handler ended its goroutine.
	wasAbandoned() bool
}

// live is a batch in a worker's hands, as the reaper and Stop see it. Each
// method checks, under the batch's lock, that the batch still holds what
// it acts on: batches are recycled.
type live interface {
	// rescue gives up the claim (id, gen) of queue q, whose lease a
	// reaper found ended before before, if the batch holds it: a claim
	// not started is released as a rerun; the running one abandons the
	// batch (its context is cancelled, the entry settled as a rescued
	// rerun or poisoned, the rest put back), unless its lease was renewed
	// meanwhile (a heartbeat) to before or later. It reports whether the
	// batch held the claim, whether it gave it up, whether it was
	// abandoned, and whether the entry was poisoned; or busy, having
	// changed nothing, if the batch's lock stayed held (see lockBriefly)
	// and the batch may hold the claim (see claimRefs).
	rescue(q *queueBase, id ID, gen uint64, before time.Time) rescueResult
	// abandon gives up an unfinished batch at Stop: the running claim is a
	// rerun, the rest put back. It reports whether it abandoned it.
	abandon() bool
	// renew extends the leases of the claims of an auto-renewed queue
	// still held to now + the queue's lease; a batch whose lock stays held
	// (see lockBriefly) is left for the next sweep.
	renew(now time.Time)
	setLiveAt(int)
	liveIndex() int
}

// batch is the entries of one dispatch: claimed in scope s, run one after
// another by one worker holding permit.
type batch[T any, K comparable] struct {
	q          *Queue[T, K]
	s          *scope.Scope
	claims     []Claim[T, K]
	permit     governor.Permit
	dispatched time.Time
	job        Job[T, K]
	// ctx is the handlers' context: the scheduler's, or with rescue on the
	// batch's own, which cancel cancels.
	ctx    context.Context
	cancel context.CancelCauseFunc

	// mu orders the worker's starts and settlements against the reaper and
	// Stop: whoever takes a claim first settles it, and a run that returns
	// after its batch was abandoned changes nothing.
	mu        sync.Mutex
	abandoned bool
	finished  bool   // its scope closed: nothing more to act on
	gone      []bool // claims settled or released by the reaper
	// cur is the claim whose handler runs, and started when it started;
	// leaseUntil is its lease as its start, a heartbeat or a renewal last
	// set it (zero: none), which a rescue checks again.
	cur        int
	started    time.Time
	leaseUntil time.Time
	// settled counts the claims settled.
	settled int
	// charged is the slot-time charged to the queue's fairness at
	// dispatch; used what the runs took.
	charged, used time.Duration
	liveAt        int // index in the scheduler's live batches

	// refs is what a reaper that finds mu held knows of the batch's claims
	// (see rescue): published by begin with rescues on, nil with them off
	// (anything may be held), and an empty list once finished.
	refs atomic.Pointer[claimRefs]

	// later, guarded by mu, is what was to be logged while mu was held:
	// it is logged once mu is let go (see unlockAndLog).
	later []fault

	// holding and result are the worker's own, for run's way out if the
	// goroutine ends: holding says that run holds mu; result is what the
	// run in progress ends with then.
	holding bool
	result  error
	// depExit is set when a backend's method that a Job method of the run
	// in progress called ended its goroutine (see jobCall), and cleared
	// as each run starts.
	depExit atomic.Bool
}

// ErrRescued is the cause with which the context of a rescued run is
// cancelled, and the exit of its batch's scope.
var ErrRescued = errors.New("sched: run rescued after its lease lapsed")

// run runs the batch's entries. Nothing new starts once the scheduler
// stops or the queue is paused: the entries not started yet go back to
// pending, at their places, when the scope closes.
//
// If the goroutine ends (runtime.Goexit) before the batch is done, the
// batch is settled on its way out and the worker replaced (see worker):
// the running entry, if any, settles as a failure when its handler ended
// the goroutine, with its handler's result when the handler had returned,
// and as a rerun when a dependency ended it before (a Clock, a backend)
// or in the handler (the backend's Renew or Progress under a Job
// method: see jobCall); the rest go back. Every metric is called where nothing is half done, so
// that one ending the goroutine strands nothing either.
func (b *batch[T, K]) run() (abandoned bool) {
	q := b.q
	s := q.s
	done := false
	// running is when the run of claim cur started, while its handler is
	// called and until it is settled: the worker's own copy of b.started,
	// which it reads without the lock.
	var running time.Time
	cur := 0
	// classifying is set while the run's error is classified: err's
	// methods are the user's code, and one that ends the goroutine must not
	// be called again on the way out (see outcome).
	classifying := false
	defer func() {
		if done {
			return
		}
		// Faults are logged once the batch's lock is let go (deferred
		// first, so run last): the Logger is the user's code, and may
		// hang; a rescue or StopAndCancel then abandons the batch instead
		// of waiting for its lock. Their stacks are taken here.
		var faults []fault
		defer func() {
			for _, f := range faults {
				s.containStack(&q.queueBase, f.msg, f.p)
			}
		}()
		jobExit := b.result == scope.ErrGoexit && !classifying && b.depExit.Load()
		if jobExit {
			// Not the handler's own Goexit: the backend's Renew or
			// Progress that a Job method called ended the goroutine
			// (logged by jobCall, with its stack). The run is a
			// dependency's exit, run again without spending an attempt,
			// and the queue is left alone for a second, as below.
			b.result = errDependencyExit
			q.leaveAlone()
		}
		switch v := recover(); {
		case v != nil:
			// Not the handler's (call recovers those) nor a metric's or
			// the Clock's (guarded): the backend's Start or Settle. The
			// worker goes on once the batch is finished.
			faults = append(faults, fault{msg: "backend panicked in Start or Settle", p: &scope.PanicError{Value: v, Stack: debug.Stack()}})
		case b.result != scope.ErrGoexit && !classifying && !jobExit:
			// Not the handler, nor its error's methods (which fail the
			// run, below, as the handler's Goexit does): a dependency
			// (the backend's Start or Settle, a metric, the Clock)
			// ended the goroutine. The queue is left alone for a
			// second, so that one that does so every time does not have
			// workers respawned in a hot loop.
			faults = append(faults, fault{msg: "a dependency ended the worker's goroutine", p: &scope.PanicError{Value: exitValue(nil), Stack: debug.Stack()}})
		}
		var (
			o          Outcome
			end        time.Time
			classified bool
			r          ran
		)
		defer func() {
			if !b.holding {
				b.mu.Lock()
			}
			b.holding = false
			// Each step deferred, so that the batch is finished and mu
			// let go even if settling ends the goroutine again (a
			// backend's Settle). The run is observed once mu is let go,
			// and the batch finished last, under mu again: while a metric
			// hangs, the batch stays live, so that a rescue or
			// StopAndCancel abandons it as it would a hung handler. The
			// batch is not recycled: it is dropped.
			defer func() {
				b.mu.Lock()
				defer b.mu.Unlock()
				if !b.abandoned && !b.finished {
					b.finishLocked(scope.Failed(scope.ErrGoexit))
				}
			}()
			defer func() { b.observe(r) }()
			defer b.unlockAndLog()
			defer func() {
				if v := recover(); v != nil { // the backend's Settle, below
					faults = append(faults, fault{msg: "backend panicked in Settle", p: &scope.PanicError{Value: v, Stack: debug.Stack()}})
				}
			}()
			if !b.abandoned && !b.finished && !b.started.IsZero() {
				if !classified { // the goroutine ended as the run was classified, below
					end = s.clock.Now()
					if classifying {
						o = q.faulted(&b.claims[b.cur], b.result, end)
					} else {
						o = q.outcome(&b.claims[b.cur], b.result, b.started, end)
					}
				}
				r = b.settleOutcomeLocked(&b.claims[b.cur], &o, end)
			}
		}()
		// The run in progress, if its handler was called, is classified
		// before the lock is taken, as in the loop below: err's methods
		// and a retry policy's Delay may hang. (Not if the lock is held:
		// the run was settled then, or never started.)
		if !running.IsZero() && !b.holding {
			end = s.clock.Now()
			if classifying { // err's methods ended the goroutine
				o = q.faulted(&b.claims[cur], b.result, end)
			} else {
				classifying = true
				o = q.outcome(&b.claims[cur], b.result, running, end)
			}
			classified = true
		}
	}()
	var now time.Time // the end of one run is the start of the next: one clock read a run
	for i := range b.claims {
		if now.IsZero() {
			now = s.clock.Now()
		}
		b.result = errDependencyExit
		more, started := b.start(i, now)
		if !more {
			break
		}
		if !started {
			continue // not started: the scope's close puts it back
		}
		if m := q.metrics; m != nil {
			// Once per run, at its start, without the lock: a metric
			// that ends the goroutine here is a dependency's exit (a
			// rerun), the handler not called yet.
			// Not below 0: a Clock that went back, or a backend's ReadyAt
			// ahead of it, is no negative wait.
			m.waited(max(now.Sub(b.claims[i].readyAt()), 0))
		}
		b.result = scope.ErrGoexit // what the run ends with if the handler ends the goroutine
		running, cur = now, i
		err := b.call(b.ctx)
		b.result = err
		end := s.clock.Now()
		// Classified before the lock is taken: a retry policy's Delay and
		// err's methods are the user's code, and may hang. A rescue or
		// StopAndCancel then abandons the batch instead of waiting.
		var o Outcome
		if err == nil {
			// outcome's first case, built in place: the Outcome that
			// outcome returns is copied out of its result as soon as it
			// was stored there, and those loads stall (72 bytes, stored
			// and loaded 16 at a time, the last two overlapping).
			o.Kind, o.Finished = OutcomeSucceeded, end
		} else {
			classifying = true
			o = q.outcome(&b.claims[i], err, now, end)
			classifying = false
		}
		now = end
		b.mu.Lock()
		b.holding = true
		if b.abandoned {
			b.holding = false
			b.mu.Unlock()
			done = true
			return true // rescued: its result is ignored
		}
		r := b.settleOutcomeLocked(&b.claims[i], &o, end)
		b.holding = false
		b.unlockAndLog()
		running = time.Time{}
		b.observe(r)
	}
	b.mu.Lock()
	b.holding = true
	if b.abandoned {
		b.holding = false
		b.mu.Unlock()
		done = true
		return true
	}
	b.finishLocked(scope.Succeeded())
	b.holding = false
	b.mu.Unlock()
	done = true
	b.recycle()
	return false
}

// errDependencyExit is what a run ends with when a dependency of the
// worker (a Clock, a backend) ends its goroutine before the handler is
// called: the entry runs again, without spending an attempt.
var errDependencyExit = Rerun(errors.New("sched: a dependency ended the worker's goroutine (runtime.Goexit) before the handler ran"))

// start starts claim i and reports true, true; or false if the batch was
// abandoned or should start nothing more; or true, false if the claim was
// released or is stale, and is skipped.
func (b *batch[T, K]) start(i int, now time.Time) (more, started bool) {
	q := b.q
	s := q.s
	b.mu.Lock()
	defer b.unlockAndLog()
	b.cur, b.started = i, time.Time{}
	if b.abandoned || s.stopping.Load() || q.paused.Load() || !q.reserveRun() {
		return false, false // the rest go back to pending, at their places
	}
	// The run is counted in q.running from here: given back unless it
	// starts (also if the backend panics).
	defer func() {
		if !started {
			q.running.Add(-1)
		}
	}()
	if b.gone[i] {
		return true, false
	}
	c := &b.claims[i]
	var lease time.Time
	if q.lease > 0 {
		lease = now.Add(q.lease)
	}
	if err := q.backend.Start(b.ctx, c, now, lease); err != nil {
		// stale (rescued) or disabled meanwhile: the scope's close puts it
		// back
		if !errchain.Is(err, ErrStale) && !errchain.Is(err, ErrWrongState) {
			b.warnLocked("backend Start failed", err)
		}
		return true, false
	}
	b.started, b.leaseUntil = now, lease
	b.depExit.Store(false)
	if m := q.metrics; m != nil {
		m.runStarted(b, now)
	}
	// Field by field: every field is set (settle cleared the Job), and a
	// composite literal would be built aside and copied with its write
	// barriers, on the path of every job.
	j := &b.job
	j.ID, j.Key, j.Payload, j.Queue, j.Group = c.ID, c.Key, c.Payload, q.name, c.Group
	j.Attempt, j.Reruns, j.Rescues = c.Attempts+1, c.Reruns, c.Rescues
	j.EnqueuedAt, j.StartedAt = c.EnqueuedAt, now
	j.b, j.gen = b, c.Gen
	return true, true
}

// call runs the handler on b.job, turning a panic into a *scope.PanicError.
func (b *batch[T, K]) call(ctx context.Context) (err error) {
	returned := false
	defer func() {
		// A handler that did not return and left recover nil called
		// runtime.Goexit, whose goroutine never sees err; or, under
		// GODEBUG=panicnil=1, panicked with nil: a panic, not a success.
		if v := recover(); v != nil || !returned {
			err = &scope.PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	err = b.q.handler(ctx, &b.job)
	returned = true
	return err
}

// settleOutcomeLocked settles claim c, whose run ended at end, with *o, and
// returns the run for observe. The outcome goes by pointer down to the
// backend's Settle, which gets the one copy: each copy of it on the way
// cost a few nanoseconds a run.
func (b *batch[T, K]) settleOutcomeLocked(c *Claim[T, K], o *Outcome, end time.Time) ran {
	if started, ok := b.unstartLocked(); ok {
		// Gone: a reaper that read the claim's lapsed lease before this
		// settlement must find it settled, not take it for one waiting
		// in the batch and rescue a run that ended.
		b.gone[b.cur] = true
		return b.settle(c, o, started, end)
	}
	return ran{}
}

// unstartLocked marks the running claim as no longer running and returns
// when it started; or false if none was started (the scope's close puts
// it back). It comes first, so that a settlement that ends the goroutine
// (a backend's Settle, an error's method) leaves nothing for run's way out
// to settle again.
func (b *batch[T, K]) unstartLocked() (time.Time, bool) {
	started := b.started
	if started.IsZero() {
		return started, false
	}
	b.started = time.Time{}
	b.q.running.Add(-1)
	return started, true
}

// ran is a run that ended, for the work-duration and retries metrics. The
// metrics are the user's code and may hang: they are observed once the
// batch's lock is let go (see observe), so that a rescue or StopAndCancel
// abandons the batch instead of waiting for its lock.
type ran struct {
	d       time.Duration
	retried bool
	ok      bool // a run ended
}

// observe records r in the queue's metrics, if it is a run and metrics are
// on. It is called without the batch's lock, where nothing is half done
// (see run).
func (b *batch[T, K]) observe(r ran) {
	if m := b.q.metrics; m != nil && r.ok {
		m.runEnded(r.d, r.retried)
	}
}

// settle settles claim c, whose run started at started and ended at end,
// with *o, and returns the run for observe.
func (b *batch[T, K]) settle(c *Claim[T, K], o *Outcome, started, end time.Time) ran {
	q := b.q
	if m := q.metrics; m != nil {
		// Before the backend's Settle, which may panic or end the
		// goroutine: the batch is then dropped, and must not stay among
		// the runs in progress, its unfinished seconds growing for ever.
		m.runStopped(b)
	}
	settled := b.settleAs(c, o)
	// Counted as the run ends, not when its batch does: a batch's runs
	// end one after another, and a long batch's first runs long before
	// it does.
	switch o.Kind {
	case OutcomeSucceeded:
		q.window.add(q.s.ns(end), 1, 0)
	case OutcomeRetry, OutcomeFailed, OutcomePoisoned:
		q.window.add(q.s.ns(end), 0, 1)
	}
	d := end.Sub(started)
	b.addUsed(d)
	b.job = Job[T, K]{}
	// Not observed if the backend did not settle it: a run rescued
	// meanwhile (on a shared backend, by another process's reaper: its
	// Settle is stale) runs again, as one abandoned here does, and a
	// retry was not scheduled.
	return ran{d: d, retried: o.Kind == OutcomeRetry, ok: settled}
}

// call calls the backend's method in through f on a goroutine other than
// a worker's (a loop's, the timekeeper's, the reaper's, Stop's, the
// metrics loop's), whose batch.run recovers the panics of Start and Settle
// at no cost per run: a panic of
// the backend's becomes an error, logged with its stack, so that it takes
// neither the goroutine nor the process down, and the queue is left alone
// for a second (see Scheduler.containStack), as it is when f ends the
// goroutine, so that a broken backend is not called in a tight loop. The
// entry is then left as the backend left it: one not started goes back
// when its batch's scope closes, and so does one whose settlement failed,
// if the backend still holds it claimed.
func (q *queueBase) call(in string, f func() error) (err error) {
	return q.guardedCall(in, true, nil, f)
}

// guardedCall is call, leaving the queue alone after a fault only if
// leave: the metrics loop's Counts, called twice a second and never in a
// hot loop, must not keep a queue whose Counts faults from running jobs.
// If later is not nil, the fault is appended to it for the caller to log
// rather than logged (see batch.callLocked).
func (q *queueBase) guardedCall(in string, leave bool, later *[]fault, f func() error) (err error) {
	returned := false
	defer func() {
		if v := recover(); v != nil || !returned {
			v = exitValue(v)
			ft := fault{msg: "backend panicked in " + in, p: &scope.PanicError{Value: v, Stack: debug.Stack()}}
			if leave {
				q.leaveAlone()
			}
			if later != nil {
				*later = append(*later, ft)
			} else {
				ft.log(q.s, q)
			}
			err = fmt.Errorf("sched: backend panicked in %s: %s", in, panicval.String(v))
		}
	}()
	err = f()
	returned = true
	return err
}

// jobCall calls the backend's method in through f for a handler's call of
// a Job method (Heartbeat, Progress): a panic of the backend's is logged
// with its stack and returned as the call's error, as on the scheduler's
// other goroutines, rather than taken for the handler's own panic. The
// queue is not left alone: the handler, not a loop, calls again. A
// backend's method that ends the goroutine is logged too, and marks the
// batch (depExit): if it ended the worker's, in its handler, the run is a
// dependency's exit, run again, not the handler's Goexit (see run).
func (b *batch[T, K]) jobCall(in string, f func() error) error {
	exited := true
	defer func() {
		if exited {
			b.depExit.Store(true)
		}
	}()
	err := b.q.guardedCall(in, false, nil, f)
	exited = false
	return err
}

// settleAs settles claim c with outcome *o and counts it settled. It
// reports whether the backend settled it (a stale claim, rescued since, or
// a Settle that failed, is not).
func (b *batch[T, K]) settleAs(c *Claim[T, K], o *Outcome) bool {
	q := b.q
	// Deferred, after the backend's Settle and even if it ends the
	// goroutine, which it may do after it settled: a retry it stored must
	// still wake the timekeeper.
	defer func() {
		switch o.Kind {
		case OutcomeRetry, OutcomeSnooze:
			q.lowerDue(o.At)
		case OutcomeSucceeded, OutcomeFailed, OutcomeCancelled, OutcomePoisoned:
			q.s.retained(&q.queueBase, o.Kind, o.Finished)
		}
		q.inflight.Add(-1)
		q.ended.Add(1) // as each run ends: a reaper watches it move (see QueueSummary.Ended)
		b.settled++
	}()
	err := q.backend.Settle(b.ctx, c, *o)
	if err != nil && !errchain.Is(err, ErrStale) {
		b.warnLocked("backend Settle failed", err)
	}
	return err == nil
}

// settleElsewhere is settleAs on a goroutine other than the batch's
// worker (the reaper's, Stop's), which callLocked guards against the
// backend.
func (b *batch[T, K]) settleElsewhere(c *Claim[T, K], o *Outcome) {
	_ = b.callLocked("Settle", func() error { b.settleAs(c, o); return nil })
}

// callLocked is queueBase.call for a goroutine that holds mu: a fault of
// the backend's leaves the queue alone at once, and is logged once mu is
// let go (see unlockAndLog).
func (b *batch[T, K]) callLocked(in string, f func() error) error {
	return b.q.guardedCall(in, true, &b.later, f)
}

// warnLocked has err, the failure of a backend's call, logged with msg
// once mu is let go (see unlockAndLog).
func (b *batch[T, K]) warnLocked(msg string, err error) {
	b.later = append(b.later, fault{msg: msg, err: err})
}

// unlockAndLog lets go of mu, then logs what was to be logged while it
// was held (see warnLocked, callLocked). The Logger is the user's code and
// may hang: a goroutine that hung in it holding mu held up a rescue, and
// StopAndCancel's abandon of the batch, for ever.
func (b *batch[T, K]) unlockAndLog() {
	later := b.later
	b.later = nil
	b.mu.Unlock()
	for _, f := range later {
		f.log(b.q.s, &b.q.queueBase)
	}
}

// finishLocked closes the batch's scope with exit (entries not settled go
// back to pending) and releases its permit and slot.
func (b *batch[T, K]) finishLocked(exit scope.Exit) {
	q := b.q
	b.finished = true
	b.refs.Store(&noClaims)
	// Deferred, so that it is done even if a finalizer of the scope (the
	// backend's) ends the goroutine; the permit last, since the governor
	// reads the Clock as it charges the queue.
	defer func() {
		if b.cancel != nil {
			b.cancel(context.Canceled)
		}
		q.inflight.Add(-int64(len(b.claims) - b.settled))
		q.s.charge(&q.queueBase, b.charged, b.used, b.settled)
		q.s.unlive(b)
		b.permit.Release()
		q.s.workDone()
	}()
	_ = b.s.Close(exit)
}

// recycle puts the finished batch back in its queue's pool. An abandoned
// batch is never recycled: its worker may still hold it. The reaper may
// still look at a recycled batch (it works on a copy of the live list), so
// the batch is reset under its lock, finished, and its queue never changes.
func (b *batch[T, K]) recycle() {
	b.mu.Lock()
	clear(b.claims)
	clear(b.gone)
	b.s, b.claims, b.gone, b.permit, b.dispatched = nil, b.claims[:0], b.gone[:0], governor.Permit{}, time.Time{}
	b.job, b.ctx, b.cancel, b.abandoned, b.finished = Job[T, K]{}, nil, nil, false, true
	b.cur, b.started, b.settled, b.charged, b.used = 0, time.Time{}, 0, 0, 0
	b.mu.Unlock()
	b.q.batches.put(b)
}

// batchPool keeps a queue's finished batches for reuse: at most max of them
// (one for each worker and loop, the most that are ever out at once), with
// room for at most maxKeptClaims claims between them. Unlike a sync.Pool it
// keeps them across garbage collections, so that a steady load allocates no
// batch and no room for claims; the bound on claims keeps what an idle
// queue holds small (8,192 claims, 1 MiB with small payloads, whatever its
// BatchSize and the number of workers).
type batchPool[T any, K comparable] struct {
	mu     sync.Mutex
	free   []*batch[T, K]
	max    int
	claims int // the room for claims of the batches in free
}

// maxKeptClaims bounds the room for claims a queue keeps in its free
// batches.
const maxKeptClaims = 8192

// get returns a finished batch of q, reused or new.
func (p *batchPool[T, K]) get(q *Queue[T, K]) *batch[T, K] {
	p.mu.Lock()
	b, ok := pop(&p.free)
	if ok {
		p.claims -= cap(b.claims)
	}
	p.mu.Unlock()
	if !ok {
		b = &batch[T, K]{q: q, finished: true, liveAt: -1}
	}
	return b
}

// put keeps the finished batch b for reuse, unless that would keep more
// than max batches or room for more than maxKeptClaims claims.
func (p *batchPool[T, K]) put(b *batch[T, K]) {
	p.mu.Lock()
	if len(p.free) < p.max && p.claims+cap(b.claims) <= maxKeptClaims {
		p.free = append(p.free, b)
		p.claims += cap(b.claims)
	}
	p.mu.Unlock()
}

// begin sets up a batch from the pool for the claims of scope sc, under
// its lock.
func (b *batch[T, K]) begin(sc *scope.Scope, claims []Claim[T, K], permit governor.Permit, now time.Time, charged time.Duration, rescue bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.s, b.claims, b.permit, b.dispatched, b.charged = sc, claims, permit, now, charged
	b.gone = append(b.gone[:0], make([]bool, len(claims))...)
	b.finished = false
	b.ctx = b.q.s.runCtx
	b.refs.Store(nil)
	if rescue {
		b.ctx, b.cancel = context.WithCancelCause(b.q.s.runCtx)
		refs := make(claimRefs, len(claims))
		for i := range claims {
			refs[i] = claimRef{claims[i].ID, claims[i].Gen}
		}
		b.refs.Store(&refs)
	}
}

// claimRefs are the claims a batch was dispatched with, as a reaper that
// finds its lock held reads them (see batch.refs).
type claimRefs []claimRef

type claimRef struct {
	id  ID
	gen uint64
}

// noClaims is the claimRefs of a finished batch.
var noClaims = claimRefs{}

// mayHold reports whether the batch whose refs are r may hold the claim
// (id, gen): nil r knows nothing.
func (r *claimRefs) mayHold(id ID, gen uint64) bool {
	if r == nil {
		return true
	}
	for _, c := range *r {
		if c.id == id && c.gen == gen {
			return true
		}
	}
	return false
}

// rescueResult is what batch.rescue did; see live.rescue.
type rescueResult struct {
	held, rescued, abandoned, poisoned, busy bool
}

// lockTries is how many times lockBriefly tries the batch's lock, yielding
// between tries, before it takes the lock's holder for one in a backend
// call.
const lockTries = 100

// lockBriefly takes b.mu for the reaper, or reports false if the lock
// stayed held through lockTries tries. The worker holds it across the
// backend's Start and Settle, and those may wait (a durable backend's I/O,
// bounded only by the run's context, which nothing cancels until a
// rescue): a reaper that waited for one batch's slow call would hold up
// the rescues and renewals of every queue. Every other hold of the lock is
// short, so a lock that stays held is one in a call, and its batch is left
// for the next sweep if it may hold the claim looked for (one taken for it
// wrongly only delays its rescue); a claim it is known not to hold is
// rescued all the same.
func (b *batch[T, K]) lockBriefly() bool {
	for range lockTries {
		if b.mu.TryLock() {
			return true
		}
		runtime.Gosched()
	}
	return false
}

// rescue implements live.
func (b *batch[T, K]) rescue(q *queueBase, id ID, gen uint64, before time.Time) rescueResult {
	if q != &b.q.queueBase {
		return rescueResult{}
	}
	refs := b.refs.Load()
	if !refs.mayHold(id, gen) {
		return rescueResult{} // known not to hold it: its lock is not needed
	}
	if !b.lockBriefly() {
		return rescueResult{busy: true}
	}
	defer b.unlockAndLog()
	if b.abandoned || b.finished {
		return rescueResult{}
	}
	for i := range b.claims {
		c := &b.claims[i]
		if c.ID != id || c.Gen != gen || b.gone[i] {
			continue
		}
		if i == b.cur && !b.started.IsZero() {
			if !b.leaseUntil.IsZero() && !b.leaseUntil.Before(before) {
				// Renewed (a heartbeat) since the reaper read the
				// lease: a heartbeat before a rescue renews it.
				return rescueResult{held: true}
			}
			return rescueResult{held: true, rescued: true, abandoned: true, poisoned: b.abandonLocked(true)}
		}
		b.gone[i] = true
		b.settleElsewhere(c, &Outcome{Kind: OutcomeRerun, Finished: b.q.s.clock.Now()})
		return rescueResult{held: true, rescued: true}
	}
	return rescueResult{}
}

// beat renews the lease of the run of claim (id, gen) to until, and records
// the renewal under the batch's lock, so that a rescue sees it (see
// rescue). The backend's Renew is called without the lock: it may wait
// (a durable backend's I/O, bounded by ctx, which a rescue cancels), and a
// rescue or StopAndCancel must not wait for it. A rescue that comes
// between the two wins: the heartbeat then returns ErrStale. A panic of
// the backend's is logged and is the heartbeat's error (see jobCall).
func (b *batch[T, K]) beat(ctx context.Context, id ID, gen uint64, until time.Time) error {
	q := b.q
	if err := b.jobCall("Renew", func() error { return q.backend.Renew(ctx, id, gen, until) }); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if i := b.cur; b.abandoned || b.started.IsZero() || b.claims[i].ID != id || b.claims[i].Gen != gen {
		return ErrStale // rescued, or ended, since
	}
	b.leaseUntil = until
	return nil
}

// abandon implements live.
func (b *batch[T, K]) abandon() bool {
	b.mu.Lock()
	defer b.unlockAndLog()
	if b.abandoned || b.finished || len(b.claims) == 0 {
		return false
	}
	b.abandonLocked(false)
	return true
}

// abandonLocked abandons the batch: its running claim is settled as a
// rerun (a rescue, if rescue: poisoned past the queue's MaxRescues; else a
// shutdown: poisoned past its MaxReruns), its
// context cancelled, the rest put back; its worker is handed over. It
// reports whether it poisoned the entry.
func (b *batch[T, K]) abandonLocked(rescue bool) (poisoned bool) {
	q := b.q
	s := q.s
	now := s.clock.Now() // first: see run
	b.abandoned = true
	var took time.Duration // how long the running claim ran, if one did
	wasRunning := !b.started.IsZero()
	// Deferred, so that the batch is finished and its worker replaced even
	// if the backend's Settle ends the goroutine (the reaper's, or Stop's);
	// and the worker replaced and the run taken off the runs in progress
	// even if a finalizer of the batch's scope (the backend's) ends it as
	// the batch finishes.
	defer func() {
		if b.cancel != nil {
			b.cancel(ErrRescued)
		}
		defer func() {
			s.handOver()
			if m := q.metrics; m != nil && wasRunning {
				// Not observed: the run did not end (it runs again), and a
				// metric, the user's code, must not hold the lock.
				m.runStopped(b)
			}
		}()
		b.finishLocked(scope.Failed(ErrRescued))
	}()
	if wasRunning {
		c := &b.claims[b.cur]
		o := Outcome{Kind: OutcomeRerun, Finished: now, Rescued: rescue}
		switch {
		case rescue && c.Rescues >= q.maxRescues:
			o.Err = lapsedTooOften(c, now)
		case !rescue && c.Reruns >= q.maxRerun:
			// A shutdown, as a handler's return of the cancelled
			// context's error is (see classify): past MaxReruns, poisoned.
			o.Err = &RunError{Attempt: c.Attempts + 1, At: now, Type: "shutdown",
				Message: fmt.Sprintf("poisoned after %d reruns: its run was abandoned at StopAndCancel", c.Reruns)}
		}
		if o.Err != nil {
			poisoned, o.Kind = true, OutcomePoisoned
		}
		took = now.Sub(b.started)
		b.addUsed(took)
		q.running.Add(-1)
		b.started = time.Time{}
		b.gone[b.cur] = true
		b.settleElsewhere(c, &o)
	}
	return poisoned
}

func (b *batch[T, K]) wasAbandoned() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.abandoned
}

// renew implements live.
func (b *batch[T, K]) renew(now time.Time) {
	q := b.q
	if !q.autoRenew || q.lease <= 0 {
		return
	}
	if !b.lockBriefly() {
		return
	}
	defer b.unlockAndLog()
	if b.abandoned || b.finished {
		return
	}
	until := now.Add(q.lease)
	for i := range b.claims {
		if c := &b.claims[i]; !b.gone[i] && i >= b.cur {
			err := b.callLocked("Renew", func() error { return q.backend.Renew(b.ctx, c.ID, c.Gen, until) })
			switch {
			case err == nil:
				if i == b.cur && !b.started.IsZero() {
					b.leaseUntil = until
				}
			case !errchain.Is(err, ErrStale):
				b.warnLocked("backend Renew failed", err)
			}
		}
	}
}

// addUsed adds a run of d to the slot-time the batch used, at least
// minRunCost, saturated: two runs of centuries (a Clock that jumps) wrapped
// the sum to a negative slot-time, which lowered the queue's pass as if it
// had given the worker back.
func (b *batch[T, K]) addUsed(d time.Duration) {
	b.used = time.Duration(sat.Add(int64(b.used), int64(max(d, minRunCost))))
}

// minRunCost is the least slot-time a run is charged for fairness, so that
// queues of jobs that take no time still share by their weights.
const minRunCost = time.Microsecond

// outcome classifies the end of the run of c, which started at start and
// ended at end with err. err's methods (Error, As, Is, Unwrap) are the
// user's code, and a typed nil error whose Error panics is a common
// mistake: if classifying panics, the run fails, not retried, with a
// RunError that says so (see faulted), and so it does if it ends the
// goroutine, which the worker's way out knows by run's classifying. Before,
// the way out took either for a faulty backend and ran the entry again,
// once a second, for ever. It runs on the worker: a goroutine of its own
// for each failed run cost 3 to 7 µs against 0.25 µs.
func (q *Queue[T, K]) outcome(c *Claim[T, K], err error, start, end time.Time) (o Outcome) {
	switch e := err.(type) {
	case nil:
		return Outcome{Kind: OutcomeSucceeded, Finished: end}
	case *SnoozeError:
		// The scheduler's own, returned as they are (a cron job's every
		// run snoozes): classified as classify would, calling no code of
		// the user's.
		return Outcome{Kind: OutcomeSnooze, Finished: end, At: e.at(end)}
	case *CancelError:
		return Outcome{Kind: OutcomeCancelled, Finished: end}
	}
	returned := false
	defer func() {
		// Not returned with recover nil: under GODEBUG=panicnil=1, a
		// panic(nil), which recover cannot tell from none; o was never
		// set then. (Or a Goexit, which run's way out classifies again.)
		if v := recover(); v != nil || !returned {
			o = q.faulted(c, err, end)
		}
	}()
	o = q.classify(c, err, start, end)
	returned = true
	return o
}

// faulted is the outcome of a run whose error faulted as it was
// classified: a failure, not retried, that calls none of err's methods.
func (q *Queue[T, K]) faulted(c *Claim[T, K], err error, end time.Time) Outcome {
	return Outcome{Kind: OutcomeFailed, Finished: end, Err: &RunError{
		Attempt: c.Attempts + 1, At: end, Type: fmt.Sprintf("%T", err),
		Message: "the handler's error faulted as it was classified: its Error, Is, As or Unwrap method panicked or ended its goroutine (not retried)",
	}}
}

// classify is outcome for a run that failed with err, on the goroutine
// outcome isolates.
func (q *Queue[T, K]) classify(c *Claim[T, K], err error, start, end time.Time) Outcome {
	o := Outcome{Finished: end}
	if errchain.Long(err, errchain.Max) {
		// errors.As would walk it for ever, on a goroutine that burns a
		// core and holds the worker; and its Error, if it formats what
		// it wraps, would overflow the stack, which nothing recovers.
		o.Kind = OutcomeFailed
		o.Err = &RunError{Attempt: c.Attempts + 1, At: end, Type: fmt.Sprintf("%T", err),
			Message: fmt.Sprintf("the handler's error wraps more than %d errors (a cycle?): not classified, not retried", errchain.Max)}
		return o
	}
	var (
		perm   *PermanentError
		snooze *SnoozeError
		cancel *CancelError
		rerun  *RerunError
	)
	switch {
	case errors.As(err, &cancel):
		o.Kind = OutcomeCancelled
		return o
	case errors.As(err, &snooze):
		o.Kind, o.At = OutcomeSnooze, snooze.at(end)
		return o
	case errors.As(err, &rerun) || q.s.stopCancelled(err):
		if c.Reruns >= q.maxRerun {
			o.Kind, o.Err = OutcomePoisoned, runError(c, err, end)
			o.Err.Message = fmt.Sprintf("poisoned after %d reruns: %s", c.Reruns, o.Err.Message)
			return o
		}
		o.Kind = OutcomeRerun
		return o
	}
	o.Err = runError(c, err, end)
	policy := &q.policy
	if c.Retry != nil {
		policy = c.Retry
	}
	if errors.As(err, &perm) || !policy.retries(c.Attempts+1) {
		o.Kind = OutcomeFailed
		return o
	}
	d, ok := policy.DelayAfter(c.Attempts+1, err)
	if !ok {
		o.Kind = OutcomeFailed
		o.Err.Message += " (not retried: the retry policy's Delay panicked or ended its goroutine)"
		return o
	}
	o.Kind, o.At = OutcomeRetry, start.Add(d)
	return o
}

// runError describes err, the failure of the run of c that ended at end.
func runError[T any, K comparable](c *Claim[T, K], err error, end time.Time) *RunError {
	re := &RunError{Attempt: c.Attempts + 1, At: end, Message: err.Error(), Type: fmt.Sprintf("%T", err)}
	for e := unwrap(err); e != nil && len(re.Chain) < 16; e = unwrap(e) {
		re.Chain = append(re.Chain, fmt.Sprintf("%T", e))
	}
	var p *scope.PanicError
	if errors.As(err, &p) && p != nil {
		re.Panic, re.Stack = true, string(p.Stack)
		re.Message = panicval.String(p.Value)
		re.Type = fmt.Sprintf("%T", p.Value)
	}
	return re
}

// unwrap returns the error err wraps, or the first of those it joins.
func unwrap(err error) error {
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return u.Unwrap()
	case interface{ Unwrap() []error }:
		if es := u.Unwrap(); len(es) > 0 {
			return es[0]
		}
	}
	return nil
}

func (b *batch[T, K]) setLiveAt(i int) { b.liveAt = i }
func (b *batch[T, K]) liveIndex() int  { return b.liveAt }
