package cron

import (
	"context"
	"log/slog"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/scope"
)

// run is one run of a job, as begin decided it.
type run struct {
	j        *job
	at       time.Time // the scheduled time it runs for
	attempt  int       // from 1; more for a retry
	prevLast time.Time // j.last before the run, restored if it does not run
}

// handle is the queue's handler: the entry of the job named by the key came
// due. It runs the job if a run is due (a catch-up, a retry, or the next
// activation), and returns a snooze until the job's next wake-up. The
// snooze is a hint: the store settles the entry from the job's state at
// that moment, which management calls may have changed meanwhile.
func (e *Engine) handle(ctx context.Context, sj *sched.Job[string, string]) (ret error) {
	r, hint := e.begin(sj.Key)
	if r.j == nil {
		return snooze(hint)
	}
	// If the handler or the LeaderFunc calls runtime.Goexit, the deferred
	// end still records the run and decides the next wake-up; the store
	// then turns the queue's failure into a rerun, which snoozes.
	ran, err := false, error(scope.ErrGoexit)
	defer func() {
		ret = snooze(e.end(&r, ran, err))
		if !ran && err != nil {
			e.log.Warn("cron: LeaderFunc exited its goroutine; the run is skipped", slog.String("job", r.j.name))
		}
	}()
	if !e.isLeader() {
		err = nil
		return nil
	}
	ran = true
	err = call(ctx, r.j.fn, r.at)
	return nil
}

// snooze returns the handler's result for a wake-up at t: a snooze, or, for
// the zero time, the end of the entry.
func snooze(t time.Time) error {
	if t.IsZero() {
		return sched.Cancel(nil)
	}
	return sched.SnoozeUntil(t)
}

// begin decides what the job named name runs now, and marks it running. If
// nothing is due (an early wake-up, a paused or unregistered job, an
// engine not started or stopping) it returns no run and the job's wake-up.
func (e *Engine) begin(name string) (run, time.Time) {
	now := e.now()
	e.mu.Lock()
	defer e.mu.Unlock()
	j := e.jobs[name]
	switch {
	case j == nil:
		return run{}, time.Time{}
	case !e.started || e.stopping:
		// The queue is paused until Start and from Stop, but a shared
		// scheduler's Inspector (and schedhttp) can resume it: it is
		// paused again, and the entry settles as it was. Running it
		// would run the job before Start; snoozed until its wake-up,
		// which may have passed, it would come back at once, for ever.
		e.q.Pause()
		return run{}, j.wake(now)
	case j.paused || j.running:
		return run{}, j.wake(now)
	}
	r := run{j: j, attempt: 1, prevLast: j.last}
	if !j.retryAt.IsZero() && !j.next.IsZero() && !now.Before(j.next) {
		// The retry starts no sooner than the job's next time (it was
		// due before it, but the run is late: no worker was free, or the
		// engine paused): the later time wins (see WithRetry), as when
		// the retry is planned.
		j.dropRetry()
	}
	switch {
	case !j.retryAt.IsZero():
		if now.Before(j.retryAt) {
			return run{}, j.retryAt
		}
		r.at, r.attempt = j.retryOf, j.attempt+1
		j.dropRetry()
	default:
		j.advance(now, true)
		switch {
		case len(j.catchup) > 0:
			r.at = j.catchup[0]
			j.catchup = j.catchup[1:]
			if len(j.catchup) == 0 {
				j.catchup = nil
			}
		case !j.next.IsZero() && !j.next.After(now):
			r.at = j.next
			j.next = j.nextAfter(r.at)
		default:
			return run{}, j.wake(now)
		}
	}
	j.running = true
	j.last = r.at
	e.active++
	return r, time.Time{}
}

// end records how run r ended (ran false: it was skipped, not run) and
// returns the job's next wake-up. The job under the name may be another by
// now (unregistered and registered again), or none. The job's state is
// updated in a deferred call, so that it is updated even if the retry
// policy's Delay (user code) calls runtime.Goexit.
func (e *Engine) end(r *run, ran bool, err error) (wake time.Time) {
	var (
		delay    time.Duration
		canRetry bool
	)
	defer func() { wake = e.settleRun(r, ran, err, delay, canRetry) }()
	if j := r.j; ran && err != nil && j.retry != nil && r.attempt <= j.retry.MaxRetries {
		delay, canRetry = retryDelay(j.retry, r.attempt, err) // user code: outside the lock
	}
	return time.Time{}
}

// settleRun is end's update of the job's state, under mu. The clock is
// read first, outside mu: a Clock (the user's, through Config.Scheduler)
// may call the engine. If it ends the goroutine (runtime.Goexit; the
// scheduler tells the time by the system clock from then on), the run is
// released and recorded all the same on the way out, so that the job is
// not left running for ever, and Stop waiting: the entry's settlement (see
// store) and the next begin then decide what the job does next. A schedule
// that ends the goroutine stops the job (see job.nextAfter).
func (e *Engine) settleRun(r *run, ran bool, err error, delay time.Duration, canRetry bool) time.Time {
	j := r.j
	released := false
	defer func() {
		if !released {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.releaseRun(r, ran, err)
		}
	}()
	now := e.now()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.releaseRun(r, ran, err)
	released = true
	cur := e.jobs[j.name]
	switch {
	case cur == nil:
		return time.Time{}
	case cur.rebase:
		cur.rebase = false
		cur.drop()
		cur.next = cur.nextAfter(now)
		return cur.wake(now)
	}
	cur.advance(now, false)
	if canRetry && cur == j && !j.paused && len(j.catchup) == 0 {
		if at := now.Add(delay); j.next.IsZero() || at.Before(j.next) {
			j.retryOf, j.retryAt, j.attempt = r.at, at, r.attempt
		}
	}
	return cur.wake(now)
}

// releaseRun marks run r as ended and records it (ran false: it was
// skipped, not run), under mu.
func (e *Engine) releaseRun(r *run, ran bool, err error) {
	j := r.j
	j.running = false
	if e.active--; e.stopping && e.active == 0 {
		close(e.drained)
	}
	if ran {
		j.runs++
		j.lastErr = err
		if err != nil {
			j.failures++
		}
	} else {
		j.last = r.prevLast
	}
}

// call runs fn, turning a panic into a *scope.PanicError. If fn calls
// runtime.Goexit, handle's deferred call records it.
func call(ctx context.Context, fn Func, at time.Time) (err error) {
	if p := protect(func() { err = fn(ctx, at) }, nil); p != nil {
		return p
	}
	return err
}
