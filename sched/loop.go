package sched

import (
	"context"
	"log/slog"
	"math"
	"runtime/debug"
	"time"

	"github.com/jobkit/jobkit/governor"
	"github.com/jobkit/jobkit/internal/panicval"
	"github.com/jobkit/jobkit/internal/sat"
	"github.com/jobkit/jobkit/scope"
)

// loop is a scheduling loop: while a worker is idle, it picks a ready
// queue, asks the governor for a permit charged to the queue's name, takes
// a batch and hands it to the worker; a batch the governor makes wait
// waits in a goroutine of its own (see awaitAdmission). With nothing to do it waits for a
// wakeup, the time the next entry is due or a rate limit refills, or ctx;
// it never polls. If a dependency ends its goroutine (runtime.Goexit in a
// Clock, a backend or the governor) or the governor panics, what the loop
// held in that step is given back, the queue it served is left alone for a
// second, and a new loop takes its place.
func (s *Scheduler) loop(ctx context.Context, self chan struct{}) {
	var st loopStep
	normal := false
	defer func() {
		if !normal {
			st.fault(s, recover(), "a dependency panicked or ended the scheduling loop's goroutine")
			if ctx.Err() == nil {
				go s.loop(ctx, self) // in this one's place: s.loops does not change
				return
			}
		}
		s.loops.Done()
	}()
	timer := s.clock.NewTimer()
	defer timer.Stop()
	broke := s.clockBroke
	for {
		wake := s.listen(self)
		st.listening = true
		if ctx.Err() != nil {
			s.unlisten()
			normal = true
			return
		}
		if !s.reserveWorker() {
			s.sleep(ctx, wake, timer, 0, &broke)
			st.unlisten(s)
			continue
		}
		st.reserved = true
		q, charged, n, wait := s.pick(s.clock.Now())
		if q == nil {
			st.unreserve(s)
			s.sleep(ctx, wake, timer, wait, &broke)
			st.unlisten(s)
			continue
		}
		st.q, st.charged, st.n = q, charged, n
		st.unlisten(s)
		permit, ok := s.tryAdmit(q)
		if !ok {
			// The governor makes the batch wait: the step goes on in a
			// goroutine of its own, which keeps the queue's place in the
			// governor's line, and this loop serves other queues.
			s.awaitAdmission(ctx, &st)
			continue
		}
		st.permit = permit
		s.serve(ctx, &st)
	}
}

// serve takes the batch of the step st, which holds a worker, the queue it
// picked and a permit, and hands it to the worker; or, with nothing taken,
// gives back what st holds. st is empty then.
func (s *Scheduler) serve(ctx context.Context, st *loopStep) {
	w := s.dispatch(ctx, st.q, st.permit, st.charged, st.n)
	if w == nil {
		st.undo(s)
		return
	}
	*st = loopStep{}
	s.workCh <- w // a worker is reserved: it takes it at once
}

// awaitAdmission hands the step st, refused by the governor's TryAcquire,
// to a goroutine of its own that waits in the governor's line for the
// queue's permit and then serves it; st is empty then. The queue is not
// picked meanwhile (see queueBase.ready): it waits in the line once, with
// one worker reserved for it, and the loops serve the queues the governor
// admits, a light queue's batches among them while a heavy queue's Weight
// does not fit. The goroutine counts as a loop (s.loops), so that Stop,
// which cancels ctx, waits for it.
func (s *Scheduler) awaitAdmission(ctx context.Context, st *loopStep) {
	own := *st
	*st = loopStep{}
	own.q.base().admitting.Store(true)
	s.loops.Add(1)
	go s.admission(ctx, own)
}

// admission is the goroutine of awaitAdmission. If a dependency panics or
// ends it (the governor, the Clock, the backend's Take outside call's
// guard), what it held is given back and the queue left alone for a
// second, as a loop does.
func (s *Scheduler) admission(ctx context.Context, st loopStep) {
	q := st.q.base()
	normal := false
	defer func() {
		if !normal {
			st.fault(s, recover(), "a dependency panicked or ended the goroutine waiting for the governor")
		}
		q.admitting.Store(false)
		s.wakeLoops() // the queue may be picked again
		s.loops.Done()
	}()
	var err error
	st.permit, err = s.acquire(ctx, st.q)
	if err != nil || q.paused.Load() { // paused while it waited, which may be long: nothing is taken
		st.undo(s)
	} else {
		s.serve(ctx, &st)
	}
	normal = true
}

// loopStep is what a scheduling loop holds in the step it is in, so that
// it can be given back: when the step ends without a batch, or when the
// loop's goroutine ends in the middle of it.
type loopStep struct {
	listening, reserved bool
	q                   runner // picked, and charged charged for a batch of at most n
	charged             time.Duration
	n                   int
	permit              governor.Permit
}

func (st *loopStep) unlisten(s *Scheduler) {
	if st.listening {
		s.unlisten()
		st.listening = false
	}
}

func (st *loopStep) unreserve(s *Scheduler) {
	if st.reserved {
		s.unreserveWorker()
		st.reserved = false
	}
}

// fault is the way out of a loop or an admission that a panic with value
// v (nil: runtime.Goexit) ends in the step st. A *scope.PanicError is a
// dependency's (the governor's, from tryAdmit or acquire), and so is a
// Goexit (the governor, the Clock): unless the queue is already left alone
// (the backend's Take, which call contained), it is left alone for a
// second, so that a dependency that does so every time does not have the
// goroutine respawned in a hot loop; what the step holds is given back.
// Any other panic is the scheduler's own bug, and goes on.
func (st *loopStep) fault(s *Scheduler, v any, msg string) {
	p, ok := v.(*scope.PanicError)
	if v != nil && !ok {
		panic(v)
	}
	if q := st.q; q != nil && (p != nil || !q.base().leftAlone(s.clock.Now())) {
		if p == nil {
			p = &scope.PanicError{Value: exitValue(nil), Stack: debug.Stack()}
		}
		s.containStack(q.base(), msg, p)
	}
	st.undo(s)
}

// undo gives back what the step holds.
func (st *loopStep) undo(s *Scheduler) {
	st.unlisten(s)
	st.permit.Release()
	st.unreserve(s)
	if st.q != nil {
		s.charge(st.q.base(), st.charged, 0, 0)
	}
	*st = loopStep{}
}

// sleep waits for wake, ctx, or for wait if it is not 0, or for *broke,
// which it then sets to nil (see Scheduler.clockBroke). A wait, not an
// instant: past the instants the epoch holds (a Clock that jumped), an
// instant a little later is the same saturated one, and a wait until it,
// 0, spun the loop.
func (s *Scheduler) sleep(ctx context.Context, wake <-chan struct{}, timer Timer, wait time.Duration, broke *<-chan struct{}) {
	if wait != 0 {
		timer.Reset(wait)
		defer timer.Stop()
	}
	select {
	case <-wake:
	case <-ctx.Done():
	case <-timer.C():
	case <-*broke: // once: the timer moves to the system clock
		*broke = nil
	}
}

// tryAdmit returns a permit for a batch of q if the governor admits it at
// once. A panic of the governor's is a *scope.PanicError, for the way out
// of the loop or admission.
func (s *Scheduler) tryAdmit(r runner) (governor.Permit, bool) {
	defer repanic()
	q := r.base()
	return s.gov.TryAcquire(q.name, q.weight)
}

// acquire waits in the governor's line for a permit for a batch of q
// (woken by a sample or a released permit) and returns it, or an error:
// ctx's, or one of the governor's. A queue whose weight the governor can
// never grant, a stopped governor, or any other error of its Acquire (a
// Governor not made by New) is warned about and the queue skipped for a
// second.
func (s *Scheduler) acquire(ctx context.Context, r runner) (governor.Permit, error) {
	defer repanic()
	q := r.base()
	p, err := s.gov.Acquire(ctx, q.name, q.weight)
	if err != nil && ctx.Err() == nil {
		// ErrInvalidWeight, ErrStopped, or a Governor not made by New:
		// any error not ctx's would otherwise be retried in a hot loop.
		s.warn("the governor refuses the queue's batches", q.name, err)
		q.leaveAlone()
	}
	return p, err
}

// repanic, deferred, turns a panic into a *scope.PanicError with the stack
// where it happened, which tells the way out of a loop or an admission
// that a dependency panicked.
func repanic() {
	if v := recover(); v != nil {
		panic(&scope.PanicError{Value: v, Stack: debug.Stack()})
	}
}

// pick returns the ready queue to serve next, the slot-time it charged it
// for the batch it is about to take and the most entries that batch takes
// (see batchSize); or nil and how long until a queue may become ready
// without a wakeup (0: not without one).
//
// Fairness is stride scheduling over slot-time: each queue has a virtual
// time, pass, which grows by the slot-time its batches use divided by its
// priority (a batch is charged an estimate when it is picked and corrected
// when it is done; a run counts at least minRunCost), and the ready queue
// with the smallest pass is picked, ties in round robin. A queue that
// becomes ready after being idle starts at the smallest pass of the queues
// that stayed ready, or, if none did, at the pass of the queue picked last
// (before its charge), so idleness earns no credit. Only the differences
// of passes matter, and pick moves them all down together once they grow
// large (see maxPass). Saturated queues so share
// the slot-time in proportion to their priorities, and a queue that used
// less is picked first. A ready queue q waits at most until every other
// ready queue j has used (priority j / priority q) times q's estimated
// batch, plus one batch each: no queue starves.
func (s *Scheduler) pick(now time.Time) (runner, time.Duration, int, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var (
		best      runner
		bestAt    int
		wait      time.Duration
		continued = math.Inf(1) // smallest pass of the queues ready before
	)
	ready := s.readyScratch[:0]
	for i := range s.queues {
		k := (s.rr + i) % len(s.queues)
		q := s.queues[k]
		b := q.base()
		if b.dispatching.Load() || b.admitting.Load() {
			// Served by another loop, or waiting in the governor's line
			// (see awaitAdmission): not picked, but not idle either, so
			// it keeps its pass.
			if b.wasReady && b.pass < continued {
				continued = b.pass
			}
			continue
		}
		ok, w := b.ready(now)
		if !ok {
			b.wasReady = false
			if w != 0 && (wait == 0 || w < wait) {
				wait = w
			}
			continue
		}
		if b.wasReady && b.pass < continued {
			continued = b.pass
		}
		ready = append(ready, k)
	}
	s.readyScratch = ready[:0]
	if math.IsInf(continued, 1) {
		// No queue stayed ready (every one drained, paused or at its
		// cap at the last pick): the queues ready now start at the
		// virtual time of the last pick, so that one idle for a week
		// does not have the workers to itself until the others catch
		// up on a week of its slot-time.
		continued = s.vtime
	}
	for _, k := range ready {
		b := s.queues[k].base()
		if !b.wasReady {
			if b.pass < continued {
				b.pass = continued
			}
			b.wasReady = true
		}
		if best == nil || b.pass < best.base().pass {
			best, bestAt = s.queues[k], k
		}
	}
	if best == nil {
		return nil, 0, 0, wait
	}
	s.rr = (bestAt + 1) % len(s.queues)
	b := best.base()
	if b.pass > maxPass {
		// Only differences of passes matter: they are moved down
		// together, so that a charge still changes the pass it is added
		// to. Far from 0, a float64's steps outgrow the least charge
		// (minRunCost over MaxPriority, 10⁻⁸ s, is lost past about
		// 1.3·10⁸ s, after a run of decades or years of slot-time),
		// and a queue whose pass no charge moved won every pick.
		base := b.pass
		for _, q := range s.queues {
			q.base().pass -= base
		}
	}
	s.vtime = b.pass
	n := b.batchSize()
	charged := b.estimate(n)
	b.pass += charged.Seconds() / float64(b.priority)
	return best, charged, n, 0
}

// maxPass is the virtual time past which pick moves every queue's pass
// down by that of the queue it picks, the smallest ready one's (about 18
// hours of slot-time per unit of priority): below it, the least charge of
// a batch is hundreds of steps of a float64.
const maxPass = 1 << 16

// ready reports whether q may have entries to dispatch at now, and if not,
// how long until it may (0: not without a wakeup).
func (q *queueBase) ready(now time.Time) (bool, time.Duration) {
	if q.paused.Load() {
		return false, 0 // resumed: Resume wakes the loops
	}
	if until, ok := q.aloneUntil(now); ok {
		return false, until.Sub(now)
	}
	if q.notified.Load() <= q.drained.Load() {
		return false, 0 // an add, a promotion or a requeue wakes the loops
	}
	if c := q.maxConc.Load(); c > 0 && q.inflight.Load() >= c {
		return false, 0 // a batch's end wakes the loops
	}
	if lim := q.limiter.Load(); lim != nil {
		// At the Clock's own time, as dispatch takes the tokens: not at
		// the epoch's n, which stands still once the Clock is past the
		// instants the epoch holds (no token came back then, ever) and
		// drops the monotonic reading of the system clock's times (a
		// step back of the wall clock stalled the queue as long).
		if tokens := lim.TokensAt(now); tokens < 1 {
			// Saturated: at a rate of 1e-300 a second the wait does not
			// fit a Duration, and converting it wrapped around to a wait
			// of 1 ns, a hot loop.
			wait := time.Duration(sat.FromFloat((1 - tokens) / float64(lim.Limit()) * float64(time.Second)))
			return false, max(wait, 1)
		}
	}
	return true, 0
}

// aloneUntil returns until when q is left alone (see blockedUntil), if
// that is after now.
func (q *queueBase) aloneUntil(now time.Time) (time.Time, bool) {
	if until := q.blockedUntil.Load(); until != nil && until.After(now) {
		return *until, true
	}
	return time.Time{}, false
}

// leftAlone reports whether q is left alone at now (see aloneUntil).
func (q *queueBase) leftAlone(now time.Time) bool {
	_, ok := q.aloneUntil(now)
	return ok
}

// estimate is the slot-time a batch of n entries of q (see batchSize) is
// charged when it is picked. It needs the scheduler's mu. It cannot
// overflow: n is at most 4096 runs of less than batchSpan, or one.
func (q *queueBase) estimate(n int) time.Duration {
	return time.Duration(n) * max(q.avgRun, minRunCost)
}

// batchSize is the most entries a batch of q takes, which it needs the
// scheduler's mu for: its BatchSize, and
//   - once a batch of it has ended, fewer when its runs are long, so that
//     a batch spans about batchSpan by the moving average of its runs: a
//     batch runs on one worker, one entry after another, and batching
//     saves a few microseconds a run, which runs of milliseconds do not
//     miss, while the entries behind them wait and other workers idle;
//   - with a cap, at most the cap's share of a worker (MaxConcurrency ÷
//     Workers), since claims count against the cap.
//
// Always at least one.
func (q *queueBase) batchSize() int {
	n := int64(q.batch)
	if q.avgRun > 0 { // something known of its runs
		n = min(n, int64(batchSpan/q.avgRun))
	}
	if c := q.maxConc.Load(); c > 0 {
		n = min(n, c/int64(q.s.cfg.Workers))
	}
	return int(max(n, 1))
}

// batchSpan is how long a batch of a queue whose runs are long is meant to
// take (see batchSize).
const batchSpan = time.Millisecond

// charge corrects q's virtual time once a batch charged charged at its pick
// used used, over runs runs.
func (s *Scheduler) charge(q *queueBase, charged, used time.Duration, runs int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q.pass += (used - charged).Seconds() / float64(q.priority)
	if runs > 0 {
		// ⅘ of the old and ⅕ of the new, without 4·avgRun, which
		// overflows for runs of decades (a Clock that jumps).
		q.avgRun += (used/time.Duration(runs) - q.avgRun) / 5
	}
}

// dispatch calls q's dispatch, containing a panic of its backend (see
// queueBase.call): it is logged, the queue is skipped for a second, and
// nothing is dispatched.
func (s *Scheduler) dispatch(ctx context.Context, q runner, permit governor.Permit, charged time.Duration, n int) (w work) {
	now := s.clock.Now()
	_ = q.base().call("Take", func() error { w = q.dispatch(ctx, now, permit, charged, n); return nil })
	return w
}

// exitValue is v, the value recovered by a deferred call that found its
// function had not returned; or, if v is nil, what ended the goroutine
// instead of a panic: runtime.Goexit.
func exitValue(v any) any {
	if v == nil {
		return "runtime.Goexit"
	}
	return v
}

// containStack logs a fault of a dependency of queue q (a panic, or
// runtime.Goexit: see exitValue) with the stack taken where it was seen,
// and skips the queue for a second, so that a dependency that faults on
// every call is not called in a hot loop.
func (s *Scheduler) containStack(q *queueBase, msg string, p *scope.PanicError) {
	q.leaveAlone()
	s.logFault(q, msg, p)
}

// logFault logs a fault of q's dependency with its stack.
func (s *Scheduler) logFault(q *queueBase, msg string, p *scope.PanicError) {
	s.log.Error("sched: "+msg, slog.String("queue", q.name), slog.String("panic", panicval.String(p.Value)), slog.String("stack", string(p.Stack)))
}

// leaveAlone skips q for a second (see blockedUntil), after a fault of a
// dependency (the governor, the backend) that calling it again at once
// would repeat in a hot loop: the loops and the timekeeper look at q again
// then.
func (q *queueBase) leaveAlone() {
	until := q.s.clock.Now().Add(time.Second)
	q.blockedUntil.Store(&until)
	q.s.wakeTimekeeper(q.s.ns(until))
}

// fault is a fault of a queue's dependency to log: a panic (or
// runtime.Goexit) p, or, with p nil, an error err it returned.
type fault struct {
	msg string
	p   *scope.PanicError
	err error
}

// log logs f, a fault of q's dependency: p with its stack, or err as a
// warning.
func (f fault) log(s *Scheduler, q *queueBase) {
	if f.p == nil {
		s.warn(f.msg, q.name, f.err)
		return
	}
	s.logFault(q, f.msg, f.p)
}
