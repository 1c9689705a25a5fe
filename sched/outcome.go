package sched

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// RetryPolicy says when a failed entry runs again. The delay before retry
// n+1 (n from 0) is Base·2ⁿ, capped at MaxDelay, so that the runs of an
// entry that keeps failing start at σ(0) = t₀ and σ(n+1) = σ(n) + Base·2ⁿ
// (each delay counts from the start of the run that failed). A retry
// happens only while the entry has had fewer than MaxRetries: MaxRetries 0
// never retries, and an entry that keeps failing runs MaxRetries+1 times.
//
// A policy is a value: set one per queue (QueueConfig.Retry) and override
// it per entry (WithRetry).
type RetryPolicy struct {
	// MaxRetries is M, the most retries. Negative is invalid.
	MaxRetries int
	// Base is c, the delay before the first retry. Defaults to one second
	// when Delay is nil.
	Base time.Duration
	// MaxDelay, if positive, caps every delay, before Jitter spreads it:
	// with Jitter j a delay may reach MaxDelay·(1+j).
	MaxDelay time.Duration
	// Jitter, in [0, 1), spreads each delay uniformly over
	// [delay·(1−Jitter), delay·(1+Jitter)], so that entries that failed
	// together do not all retry together. Zero keeps the exact schedule.
	Jitter float64
	// Delay, if not nil, replaces the exponential schedule: it returns the
	// delay before the retry that follows failed attempt number attempt
	// (1 for the first run), given the error. MaxDelay and Jitter still
	// apply.
	Delay func(attempt int, err error) time.Duration
}

// DefaultRetry retries three times, after 1s, 2s and 4s, with 10% jitter.
var DefaultRetry = RetryPolicy{MaxRetries: 3, Base: time.Second, Jitter: 0.1}

// NoRetry fails an entry at its first failure.
var NoRetry = RetryPolicy{}

// Validate returns an error wrapping ErrInvalid if p is not a valid policy:
// a negative MaxRetries, Base or MaxDelay, or a Jitter outside [0, 1).
func (p *RetryPolicy) Validate() error {
	switch {
	case p.MaxRetries < 0:
		return fmt.Errorf("%w: RetryPolicy.MaxRetries %d < 0", ErrInvalid, p.MaxRetries)
	case p.Base < 0:
		return fmt.Errorf("%w: RetryPolicy.Base %v < 0", ErrInvalid, p.Base)
	case p.MaxDelay < 0:
		return fmt.Errorf("%w: RetryPolicy.MaxDelay %v < 0", ErrInvalid, p.MaxDelay)
	case !(p.Jitter >= 0 && p.Jitter < 1):
		return fmt.Errorf("%w: RetryPolicy.Jitter %v not in [0, 1)", ErrInvalid, p.Jitter)
	}
	return nil
}

// retries reports whether an entry that has failed attempts times (this run
// included) is retried: while the retries so far, attempts−1, are fewer
// than MaxRetries.
func (p *RetryPolicy) retries(attempts int) bool { return attempts-1 < p.MaxRetries }

// DelayAfter returns the delay before the retry that follows the failed
// attempt number attempt (1 for the first run), which failed with err:
// Base·2^(attempt−1), or what Delay returns, capped at MaxDelay and spread
// by Jitter. It reports false if Delay panics or ends its goroutine
// (runtime.Goexit): the scheduler then fails the entry rather than guess a
// delay. Delay runs on a goroutine of its own, so that its Goexit ends
// only that one. It does not say whether a retry is left (see MaxRetries).
func (p *RetryPolicy) DelayAfter(attempt int, err error) (d time.Duration, ok bool) {
	if p.Delay != nil {
		if d, ok = p.callDelay(attempt, err); !ok {
			return 0, false
		}
	} else {
		base := p.Base
		if base == 0 {
			base = time.Second
		}
		n := max(attempt-1, 0) // this is retry n+1; an attempt below 1 is the first
		if n >= 62 || base > math.MaxInt64>>n {
			d = math.MaxInt64
		} else {
			d = base << n
		}
	}
	if p.MaxDelay > 0 {
		d = min(d, p.MaxDelay)
	}
	if p.Jitter > 0 && d > 0 {
		f := 1 + p.Jitter*(2*rand.Float64()-1)
		if j := float64(d) * f; j < math.MaxInt64 {
			d = time.Duration(j)
		}
	}
	return d, true
}

// callDelay calls p.Delay on a goroutine of its own (see isolated) and
// reports false if it panicked or ended that goroutine. Only a failed run
// with a Delay of its own pays for the goroutine.
func (p *RetryPolicy) callDelay(attempt int, err error) (d time.Duration, ok bool) {
	ok = isolated(func() { d = max(p.Delay(attempt, err), 0) })
	return d, ok
}

// The errors a handler returns say how its run ended, beyond succeeding
// (nil) and failing (any other error: retried by the policy, then failed).
// Build them with Permanent, Snooze, Cancel and Rerun, and match them with
// errors.As; each wraps the error it was given.

// PermanentError is a failure that another run would repeat (malformed
// input, a missing reference): the entry fails at once, without retries.
type PermanentError struct{ Err error }

// Permanent returns err as a permanent failure. A nil err is a permanent
// failure with a generic message.
func Permanent(err error) error {
	if err == nil {
		err = errors.New("permanent failure")
	}
	return &PermanentError{Err: err}
}

// Error returns "permanent: " and the wrapped error's message. A
// PermanentError built without Err (or a nil one) reads as Permanent(nil).
func (e *PermanentError) Error() string {
	if e == nil || e.Err == nil {
		return "permanent: permanent failure"
	}
	return "permanent: " + e.Err.Error()
}

// Unwrap returns the wrapped error.
func (e *PermanentError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// SnoozeError asks to run the entry again later, without spending an
// attempt: the job is not ready yet (a resource it waits for), or, for a
// periodic job, its next time has not come.
type SnoozeError struct {
	// After is the delay from the end of the run; Until, if not zero, the
	// time instead.
	After time.Duration
	Until time.Time
}

// Snooze returns an error that runs the entry again after d (at once if d
// is not positive) without spending an attempt.
func Snooze(d time.Duration) error { return &SnoozeError{After: max(d, 0)} }

// SnoozeUntil returns an error that runs the entry again at t (at once if t
// has passed) without spending an attempt.
func SnoozeUntil(t time.Time) error { return &SnoozeError{Until: t} }

// Error describes the snooze.
func (e *SnoozeError) Error() string {
	if e == nil {
		return "snooze 0s"
	}
	if !e.Until.IsZero() {
		return "snooze until " + e.Until.Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("snooze %v", e.After)
}

// at returns when a run that ended at end runs again: at once for a nil
// SnoozeError, and for one built with a negative After, as Snooze does.
func (e *SnoozeError) at(end time.Time) time.Time {
	switch {
	case e == nil:
		return end
	case !e.Until.IsZero():
		return e.Until
	}
	return end.Add(max(e.After, 0))
}

// CancelError ends the entry as cancelled: not retried, and not an error in
// the error queue.
type CancelError struct{ Reason error }

// Cancel returns an error that cancels the entry, with a reason (which may
// be nil).
func Cancel(reason error) error { return &CancelError{Reason: reason} }

// Error returns "cancelled", with the reason if there is one.
func (e *CancelError) Error() string {
	if e == nil || e.Reason == nil {
		return "cancelled"
	}
	return "cancelled: " + e.Reason.Error()
}

// Unwrap returns the reason.
func (e *CancelError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Reason
}

// RerunError runs the entry again at once without spending an attempt: the
// run was cut short by something outside the job (the process is shutting
// down, a connection it depends on was reset). Reruns have their own cap
// (QueueConfig.MaxReruns), after which the entry is poisoned.
type RerunError struct{ Err error }

// Rerun returns err as a reason to run the entry again without spending an
// attempt.
func Rerun(err error) error {
	if err == nil {
		err = errors.New("rerun")
	}
	return &RerunError{Err: err}
}

// Error returns "rerun: " and the wrapped error's message. A RerunError
// built without Err (or a nil one) reads as Rerun(nil).
func (e *RerunError) Error() string {
	if e == nil || e.Err == nil {
		return "rerun: rerun"
	}
	return "rerun: " + e.Err.Error()
}

// Unwrap returns the wrapped error.
func (e *RerunError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}
