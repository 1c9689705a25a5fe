package cron

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/scope"
)

// Func is a job's handler. It runs for the activation at scheduled (in the
// schedule's location), at or after that time. Its error, or a panic
// (recovered as a [*scope.PanicError] with its stack), is recorded as the
// run's outcome (see [JobInfo]); it never stops later runs. ctx is not
// cancelled when the job is unregistered or the engine stops: Stop waits for
// the handler instead.
type Func func(ctx context.Context, scheduled time.Time) error

// WithMissed sets a job's policy for missed runs. Defaults to [Skip].
func WithMissed(m Missed) Option {
	return Option{func(c *options) { c.missed = m }}
}

// WithLastRun gives the scheduled time of the job's last run, as kept by a
// previous process, so that the runs missed since are made up by the job's
// policy when it is registered (catch-up after a restart). For
// [Engine.RegisterSpec] it is also the anchor of an @every spec. The zero
// time, the default, means none: the job starts from its registration.
func WithLastRun(t time.Time) Option {
	return Option{func(c *options) { c.lastRun = t }}
}

// WithRetry makes a job retry a failed run (an error, a panic) of a
// scheduled time, at most p.MaxRetries times, after p's delays (counted from
// the end of the failed run). A retry that would start at or after the job's
// next time, or while missed runs wait, is dropped: the later time wins.
// Update, Pause and Resume drop a waiting retry. Defaults to no retries: a
// failed run is recorded and the job waits for its next time.
func WithRetry(p sched.RetryPolicy) Option {
	return Option{func(c *options) { c.retry = &p }}
}

// job is a registered job. Its fields are guarded by Engine.mu.
type job struct {
	name   string
	s      Schedule
	fn     Func
	missed Missed
	retry  *sched.RetryPolicy

	// entry is the ID of the job's live entry, or a smaller one: entries
	// of one name get increasing IDs.
	entry sched.ID

	// next is the first activation not decided yet (zero: none). Every
	// activation before it was run, or is in catchup, or was missed and
	// dropped by the policy.
	next time.Time
	// catchup holds the missed activations to run at once, oldest first.
	catchup []time.Time
	// retryAt, if not zero, is when the failed run of retryOf, attempt
	// attempt (from 1), runs again.
	retryOf, retryAt time.Time
	attempt          int

	rebase  bool // the schedule changed during a run: recompute at its end
	paused  bool
	running bool

	last     time.Time // scheduled time of the last started run
	lastErr  error     // the last run's outcome
	schedErr error     // a panic or Goexit of the schedule's Next, which stopped the job
	runs     int64
	failures int64
}

// wake returns when the job's entry is due: its retry, at once (now) for a
// catch-up, or its next activation. The zero time means never. While a run
// of the job goes on, it is runningRecheck after now at the soonest: the
// entry is dispatched during a run only once the run was rescued (its
// lease lapsed: the process stalled, on a backend that several share) and
// its handler has not returned. Snoozed until a wake-up that has come, it
// would come back at once, for as long as the run goes on; the run's own
// result is fenced off, so nothing else brings the entry back when it
// ends.
func (j *job) wake(now time.Time) time.Time {
	var w time.Time
	switch {
	case !j.retryAt.IsZero():
		w = j.retryAt
	case len(j.catchup) > 0:
		w = now
	default:
		w = j.next
	}
	if j.running && !w.IsZero() {
		if soonest := now.Add(runningRecheck); w.Before(soonest) {
			return soonest
		}
	}
	return w
}

// runningRecheck is how long the entry of a job whose run goes on waits, at
// the soonest, before it is dispatched again: see job.wake.
const runningRecheck = time.Second

// drop drops the missed runs waiting and the retry.
func (j *job) drop() {
	j.catchup = j.catchup[:0]
	j.dropRetry()
}

// dropRetry drops the retry waiting, if any.
func (j *job) dropRetry() {
	j.retryOf, j.retryAt, j.attempt = time.Time{}, time.Time{}, 0
}

// nextAfter returns the first activation after t, or the zero time when
// there is none or the schedule panicked (which is then the job's last
// outcome). If the schedule's Next calls runtime.Goexit, nextAfter does not
// return: the job is stopped on the goroutine's way out (see stop).
func (j *job) nextAfter(t time.Time) time.Time {
	n, err := safeNext(j.s, t, j.nextExited)
	if err != nil {
		j.stop(err)
	}
	return n
}

// advance decides the activations that passed before now (Missed: run
// some, drop the rest). At a dispatch (onTime), an activation whose run is
// merely late is not missed, whether or not catch-ups wait before it: only
// when the following activation has passed too are they missed; after a
// run every activation before its end was missed. A schedule that panics
// stops the job, as in nextAfter.
func (j *job) advance(now time.Time, onTime bool) {
	if j.next.IsZero() || !j.next.Before(now) {
		return
	}
	if onTime {
		if n2, err := safeNext(j.s, j.next, j.nextExited); err == nil && (n2.IsZero() || !n2.Before(now)) {
			return
		}
	}
	runs, next, err := safeDue(j.s, j.next.Add(-1), now, j.missed, j.nextExited)
	if err != nil {
		j.stop(err)
	}
	j.catchup = append(j.catchup, runs...)
	if over := len(j.catchup) - j.missed.n; over > 0 {
		j.catchup = append(j.catchup[:0], j.catchup[over:]...)
	}
	j.next = next
}

// errNextGoexit is the fault of a schedule whose Next called
// runtime.Goexit.
var errNextGoexit = fmt.Errorf("Schedule.Next called runtime.Goexit (%w)", scope.ErrGoexit)

// stop records err, a fault of the job's schedule, as part of the job's
// last outcome, and stops the job: it has no next activation until Update.
// Missed runs already decided still run.
func (j *job) stop(err error) {
	j.schedErr = fmt.Errorf("cron: job %q: schedule: %w", j.name, err)
	j.next = time.Time{}
}

// nextExited is the exited function of the job's calls of its schedule: a
// Next that ends the goroutine (runtime.Goexit) stops the job as a Next
// that panics does. The caller's own way out (its deferred unlock of
// Engine.mu) then leaves the job's state as stop left it.
func (j *job) nextExited() { j.stop(errNextGoexit) }

// safeNext calls s.Next(t), turning a panic into an error. If Next calls
// runtime.Goexit, safeNext does not return, and calls exited (if not nil)
// on the goroutine's way out (see protect).
func safeNext(s Schedule, t time.Time, exited func()) (n time.Time, err error) {
	err = protect(func() { n, _ = nextOf(s, t) }, exited)
	return n, err
}

// safeDue calls Due, turning a panic of s into an error and no next time,
// and a runtime.Goexit of s into a call of exited, as safeNext does.
func safeDue(s Schedule, last, now time.Time, m Missed, exited func()) (runs []time.Time, next time.Time, err error) {
	if err = protect(func() { runs, next = Due(s, last, now, m) }, exited); err != nil {
		return nil, time.Time{}, err
	}
	return runs, next, nil
}

// protect calls f, user code on a path that must not be left half done,
// and returns a *scope.PanicError if f panicked (scope.ErrGoexit if it
// panicked with nil under GODEBUG=panicnil=1). If f calls runtime.Goexit,
// which no deferred call can stop, protect notices it (f did not return)
// and calls exited, if not nil, before the goroutine's exit goes on through
// its caller's deferred calls: exited records what the caller would have.
func protect(f func(), exited func()) (err error) {
	returned := false
	defer func() {
		if r := recover(); r != nil {
			err = &scope.PanicError{Value: r, Stack: debug.Stack()}
		} else if !returned {
			// Goexit; or, under GODEBUG=panicnil=1, a panic(nil), which
			// recover cannot tell from it, and stops: then protect
			// returns, after exited, with scope.ErrGoexit, so that f is
			// not taken for having returned.
			if exited != nil {
				exited()
			}
			err = scope.ErrGoexit
		}
	}()
	f()
	returned = true
	return nil
}

// checkRetry returns an error for an invalid retry policy.
func checkRetry(p *sched.RetryPolicy) error {
	if p == nil {
		return nil
	}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidJob, err)
	}
	return nil
}

// retryDelay is the delay before the retry that follows failed attempt
// number attempt (from 1), as the policy gives it; a Delay that panics
// gives no retry (ok false).
func retryDelay(p *sched.RetryPolicy, attempt int, err error) (time.Duration, bool) {
	return p.DelayAfter(attempt, err)
}

// JobInfo describes a registered job, as [Engine.Jobs] lists it.
type JobInfo struct {
	// Name is the job's name; Schedule and Missed are its schedule and
	// missed-run policy.
	Name     string
	Schedule Schedule
	Missed   Missed
	// Next is the next activation of its schedule the job waits for: the
	// zero time when there is none.
	Next time.Time
	// CatchUp is the number of missed runs waiting to run at once.
	CatchUp int
	// RetryAt, if not zero, is when a failed run is retried.
	RetryAt time.Time
	// Last is the scheduled time of the last run that started (zero:
	// none yet).
	Last time.Time
	// LastErr is the outcome of the last run that ended: nil if it
	// succeeded (or none ended), its error, or a [*scope.PanicError] if it
	// panicked, or [scope.ErrGoexit] if it called runtime.Goexit. Joined
	// to it (errors.Join) is the panic of a Schedule whose Next panicked,
	// or an error wrapping [scope.ErrGoexit] ("Schedule.Next called
	// runtime.Goexit") for one whose Next ended the engine's goroutine:
	// either stops the job until Update.
	LastErr error
	// Runs counts the runs that ended, Failures those that failed.
	Runs, Failures int64
	// Running reports a run in progress; Paused a paused job.
	Running, Paused bool
}

func (j *job) info() JobInfo {
	lastErr := j.lastErr
	if j.schedErr != nil {
		lastErr = errors.Join(j.lastErr, j.schedErr)
	}
	return JobInfo{
		Name: j.name, Schedule: j.s, Missed: j.missed,
		Next: j.next, CatchUp: len(j.catchup), RetryAt: j.retryAt,
		Last: j.last, LastErr: lastErr, Runs: j.runs, Failures: j.failures,
		Running: j.running, Paused: j.paused,
	}
}
