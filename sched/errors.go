package sched

import "errors"

var (
	// ErrInvalid is wrapped by the errors returned for invalid arguments and
	// configuration.
	ErrInvalid = errors.New("sched: invalid argument")
	// ErrStopped is returned by calls on a scheduler that was stopped.
	ErrStopped = errors.New("sched: stopped")
	// ErrUnknownQueue is returned for a queue name no queue has.
	ErrUnknownQueue = errors.New("sched: unknown queue")
	// ErrDuplicateQueue is returned by NewQueue for a name already taken.
	ErrDuplicateQueue = errors.New("sched: duplicate queue name")
	// ErrNotFound is returned for an entry ID the queue does not hold.
	ErrNotFound = errors.New("sched: entry not found")
	// ErrStale is returned by a backend for a settlement, renewal or
	// heartbeat of a run that is no longer the entry's current run.
	ErrStale = errors.New("sched: stale run")
	// ErrWrongState is returned by a management call that does not apply to
	// the entry's state (retrying a running entry, say).
	ErrWrongState = errors.New("sched: entry in the wrong state")
	// ErrAbandoned is returned by StopAndCancel when it abandoned runs that
	// did not return in time.
	ErrAbandoned = errors.New("sched: runs abandoned at stop")
)
