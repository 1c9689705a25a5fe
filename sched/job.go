package sched

import (
	"context"
	"time"
)

// Job is one run of an entry, as its handler sees it. It is valid only
// until the handler returns: the scheduler reuses it for the next run of
// the batch, so a goroutine of the handler's that beats or reports
// progress must be done before the handler returns. A Job the scheduler
// did not make (a handler's unit test's, the zero Job, a nil *Job) has no run:
// Progress and Heartbeat return ErrStale.
type Job[T any, K comparable] struct {
	// ID is the entry's, Key its distinct key, Payload what was added:
	// the value itself, not a copy of what it refers to. Get, List, the
	// Inspector and schedhttp (which encodes payloads while their handlers
	// run) see the same pointee, map or slice, so a handler must not
	// change what its payload refers to: that races with them (for a map,
	// the runtime ends the process).
	ID      ID
	Key     K
	Payload T
	// Queue is the queue's name, Group the entry's group ("" for none).
	Queue, Group string
	// Attempt is this run's attempt, from 1: the attempts spent before it,
	// plus one. Reruns and snoozes spend none. Reruns and Rescues count the
	// entry's earlier runs that ended without a result, and those of them
	// the reaper rescued.
	Attempt, Reruns, Rescues int
	// EnqueuedAt is when the entry was added, StartedAt when this run
	// started.
	EnqueuedAt, StartedAt time.Time

	b   *batch[T, K]
	gen uint64
}

// Progress records what the run has done so far, for inspection (see
// Entry.Progress). It returns ErrStale if the run is no longer the entry's
// current one.
func (j *Job[T, K]) Progress(ctx context.Context, p Progress) error {
	if err := checkCtx(ctx); err != nil {
		return err
	}
	if j == nil || j.b == nil {
		return ErrStale
	}
	b := j.b
	id, gen := j.ID, j.gen
	return b.jobCall("Progress", func() error { return b.q.backend.Progress(ctx, id, gen, p) })
}

// Heartbeat renews the run's lease (see QueueConfig.Lease) to the queue's
// lease duration from now, so that the reaper does not rescue it. A
// heartbeat after the lease lapsed, before a rescue, still renews it. It
// returns ErrStale, and renews nothing, once the run is no longer the
// entry's current one (it was rescued, or the handler returned and the
// batch has no next run: a Job kept past its handler's return stands for
// the batch's next run, which it renews; see Job).
func (j *Job[T, K]) Heartbeat(ctx context.Context) error {
	if err := checkCtx(ctx); err != nil {
		return err
	}
	if j == nil || j.b == nil {
		return ErrStale
	}
	q := j.b.q
	return j.b.beat(ctx, j.ID, j.gen, q.s.clock.Now().Add(q.lease))
}
