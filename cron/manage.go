package cron

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jobkit/jobkit/sched"
)

// The Engine's management of jobs: register, update, unregister, pause,
// resume, list.

// Register registers a job named name that runs fn at the times of s,
// starting with the first activation after now, or, with [WithLastRun],
// making up the runs missed since the last run by its [Missed] policy
// ([WithMissed]). Options: WithMissed, WithLastRun, WithRetry; others are
// ignored.
//
// The engine calls s.Next with its lock held: s must be quick and must not
// call the engine (the schedules of Parse and Every take well under a
// microsecond). A Next that panics, or that calls runtime.Goexit on the
// scheduler's goroutine, stops the job (see [JobInfo].LastErr); one that
// calls runtime.Goexit in a call of the engine (Register, Update, Resume)
// ends the caller's goroutine (see "Failures" in the package
// documentation).
//
// It returns an error wrapping [ErrInvalidJob] for an empty name, a nil s
// or fn, an invalid retry policy, a nil ctx, or an s whose Next panics;
// [ErrDuplicateJob] if the name is registered; [ErrStopped] once the engine
// was stopped; ctx's error if it is done when Register is called; and the
// queue's error if adding the job's entry fails (nothing is registered
// then). Cost: one add to the queue, O(log n)
// for n jobs; a registered job holds about 0.9 KB of heap, its entry
// included (BenchmarkCron_Register in the bench module).
func (e *Engine) Register(ctx context.Context, name string, s Schedule, fn Func, opts ...Option) error {
	var o options
	o.apply(opts)
	return e.register(ctx, name, s, fn, &o)
}

// RegisterSpec is Register with the schedule parsed from spec by [Parse]
// with opts (WithLocation, WithAnchor). The anchor of an @every spec
// defaults to the job's last run (WithLastRun), or else the time of
// registration, so that @every d runs every d from there. A spec Parse
// refuses gives its error (wrapping [ErrInvalidSpec]).
func (e *Engine) RegisterSpec(ctx context.Context, name, spec string, fn Func, opts ...Option) error {
	if err := e.made(); err != nil {
		return err
	}
	o := options{loc: time.Local}
	o.apply(opts)
	if !o.anchorSet {
		o.anchor = o.lastRun
		if o.anchor.IsZero() {
			o.anchor = e.now()
		}
	}
	s, err := parse(spec, &o)
	if err != nil {
		return err
	}
	return e.register(ctx, name, s, fn, &o)
}

func (e *Engine) register(ctx context.Context, name string, s Schedule, fn Func, o *options) error {
	switch {
	case ctx == nil:
		return fmt.Errorf("%w: nil context", ErrInvalidJob)
	case name == "":
		return fmt.Errorf("%w: empty name", ErrInvalidJob)
	case s == nil:
		return fmt.Errorf("%w: job %q: nil schedule", ErrInvalidJob, name)
	case fn == nil:
		return fmt.Errorf("%w: job %q: nil handler", ErrInvalidJob, name)
	}
	if err := checkRetry(o.retry); err != nil {
		return fmt.Errorf("job %q: %w", name, err)
	}
	if err := e.made(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	e.opMu.Lock()
	defer e.opMu.Unlock()
	now := e.now()
	j := &job{name: name, s: s, fn: fn, missed: o.missed, retry: o.retry}
	var err error
	if o.lastRun.IsZero() {
		j.next, err = safeNext(s, now, nil)
	} else {
		j.next, err = safeNext(s, o.lastRun, nil)
		if err == nil {
			j.advance(now, false)
			// A Next that panics in the walk over the missed runs
			// panicked during Register as well: advance stopped the
			// job, and the job is refused, not registered stopped.
			if j.schedErr != nil {
				err = errors.Unwrap(j.schedErr)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("%w: job %q: schedule: %w", ErrInvalidJob, name, err)
	}
	e.mu.Lock()
	switch {
	case e.stopping:
		e.mu.Unlock()
		return ErrStopped
	case e.jobs[name] != nil:
		e.mu.Unlock()
		return fmt.Errorf("%w: %q", ErrDuplicateJob, name)
	}
	e.jobs[name] = j
	wake := j.wake(now)
	e.mu.Unlock()
	if wake.IsZero() {
		return nil
	}
	if err := e.place(ctx, j, wake, false); err != nil {
		e.mu.Lock()
		if e.jobs[name] == j {
			delete(e.jobs, name)
		}
		e.mu.Unlock()
		return err
	}
	return nil
}

// Update replaces the schedule of the job named name with s. It applies
// from the next time: the job next runs at the first activation of s after
// now, and no activation of s before now is made up. During a run it
// applies when the run ends: the job then waits for the first activation of
// s after the run's end. Missed runs waiting to run and a waiting retry are
// dropped. Errors as for Register, and [ErrUnknownJob]; once the engine was
// stopped it returns [ErrStopped] and the job keeps its schedule.
func (e *Engine) Update(ctx context.Context, name string, s Schedule) error {
	switch {
	case ctx == nil:
		return fmt.Errorf("%w: nil context", ErrInvalidJob)
	case s == nil:
		return fmt.Errorf("%w: job %q: nil schedule", ErrInvalidJob, name)
	}
	if err := e.made(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	e.opMu.Lock()
	defer e.opMu.Unlock()
	now := e.now()
	next, err := safeNext(s, now, nil)
	if err != nil {
		return fmt.Errorf("%w: job %q: schedule: %w", ErrInvalidJob, name, err)
	}
	e.mu.Lock()
	j := e.jobs[name]
	switch {
	case e.stopping: // nothing changes: with a shared scheduler the queue would still take the entry
		e.mu.Unlock()
		return ErrStopped
	case j == nil:
		e.mu.Unlock()
		return fmt.Errorf("%w: %q", ErrUnknownJob, name)
	}
	j.s, j.schedErr = s, nil
	j.drop()
	j.next = next
	j.rebase = j.running
	wake, paused := j.wake(now), j.paused
	e.mu.Unlock()
	if wake.IsZero() {
		return nil
	}
	return e.place(ctx, j, wake, paused)
}

// UpdateSpec is Update with the schedule parsed from spec by [Parse] with
// opts (WithLocation, WithAnchor). The anchor of an @every spec defaults to
// the time of the update.
func (e *Engine) UpdateSpec(ctx context.Context, name, spec string, opts ...Option) error {
	if err := e.made(); err != nil {
		return err
	}
	o := options{loc: time.Local}
	o.apply(opts)
	if !o.anchorSet {
		o.anchor = e.now()
	}
	s, err := parse(spec, &o)
	if err != nil {
		return err
	}
	return e.Update(ctx, name, s)
}

// Unregister removes the job named name: it runs no more. A run in progress
// finishes, with its context not cancelled; Unregister does not wait for
// it. The name can be registered again at once; the new job's first run
// does not start before the old run ends. It returns an error wrapping
// [ErrUnknownJob] if no job has the name, ctx's error if it is done when
// Unregister is called (nothing changes), and the queue's error if removing
// the entry fails (the job is unregistered all the same: its entry ends
// when it comes due). Once the job is unregistered, its entry is removed
// whatever ctx does meanwhile (as in Pause).
func (e *Engine) Unregister(ctx context.Context, name string) error {
	if ctx == nil {
		return fmt.Errorf("%w: nil context", ErrInvalidJob)
	}
	if err := e.made(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	e.opMu.Lock()
	defer e.opMu.Unlock()
	e.mu.Lock()
	j := e.jobs[name]
	if j == nil {
		e.mu.Unlock()
		return fmt.Errorf("%w: %q", ErrUnknownJob, name)
	}
	delete(e.jobs, name)
	id := j.entry
	e.mu.Unlock()
	// The job is gone: its entry must go too, even if ctx ends meanwhile.
	// The entry of a paused job is disabled and never comes due, so left
	// behind it would stay live for ever.
	return e.remove(context.WithoutCancel(ctx), name, id)
}

// Pause stops running the job named name until Resume: a run in progress
// finishes, and no activation that falls while the job is paused is ever
// made up. Pausing a paused job does nothing. It returns an error wrapping
// [ErrUnknownJob] if no job has the name, [ErrStopped] once the engine was
// stopped (the job is left as it was), ctx's error if it is done when Pause
// is called, and the queue's error. Once the job has changed, its entry
// follows whatever ctx does meanwhile (as in Register and Update).
func (e *Engine) Pause(ctx context.Context, name string) error {
	return e.setPaused(ctx, name, true)
}

// Resume undoes Pause: the job next runs at the first activation of its
// schedule after now (a job its schedule stopped stays stopped until
// Update); missed runs that were waiting and a waiting retry are dropped.
// Resuming a job that is not paused does nothing. Errors as for Pause.
func (e *Engine) Resume(ctx context.Context, name string) error {
	return e.setPaused(ctx, name, false)
}

func (e *Engine) setPaused(ctx context.Context, name string, paused bool) error {
	if ctx == nil {
		return fmt.Errorf("%w: nil context", ErrInvalidJob)
	}
	if err := e.made(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	e.opMu.Lock()
	defer e.opMu.Unlock()
	j, wake, err := e.markPaused(name, paused)
	switch {
	case err != nil || j == nil:
		return err
	case wake.IsZero() && !paused:
		// Resumed with no further time (yet: a run in progress may
		// still plan a retry): the entry, disabled by Pause, is
		// enabled, so that it comes due and its run or settlement
		// decides, as for a job that was never paused; disabled, it
		// would never come due again.
		return e.enable(context.WithoutCancel(ctx), j)
	case wake.IsZero():
		return nil
	}
	return e.place(ctx, j, wake, paused)
}

// enable enables the live entry of job j, if it has one.
func (e *Engine) enable(ctx context.Context, j *job) error {
	e.mu.Lock()
	id := j.entry
	e.mu.Unlock()
	if id == 0 {
		return nil // no entry was ever added
	}
	err := e.q.Enable(e.own(ctx), id)
	if errors.Is(err, sched.ErrNotFound) || errors.Is(err, sched.ErrWrongState) {
		return nil // ended meanwhile
	}
	return err
}

// markPaused is setPaused's change of the job, under mu: it returns the
// job and its wake-up, or none. mu is let go by a deferred call, so that a
// schedule whose Next ends the goroutine (runtime.Goexit) leaves it free.
func (e *Engine) markPaused(name string, paused bool) (*job, time.Time, error) {
	now := e.now()
	e.mu.Lock()
	defer e.mu.Unlock()
	j := e.jobs[name]
	switch {
	case e.stopping:
		return nil, time.Time{}, ErrStopped
	case j == nil:
		return nil, time.Time{}, fmt.Errorf("%w: %q", ErrUnknownJob, name)
	case j.paused == paused:
		return nil, time.Time{}, nil
	}
	j.paused = paused
	if paused {
		// A waiting retry is dropped (see WithRetry); missed runs that
		// wait are dropped by Resume.
		j.dropRetry()
	} else {
		j.drop()
		if j.schedErr == nil {
			// A job its schedule stopped stays stopped until Update
			// (see JobInfo.LastErr): its Next is not called again.
			j.next = j.nextAfter(now)
		}
	}
	return j, j.wake(now), nil
}

// Jobs returns the registered jobs, sorted by name. Cost: O(n log n) for n
// jobs, under the engine's lock.
func (e *Engine) Jobs() []JobInfo {
	e.mu.Lock()
	out := make([]JobInfo, 0, len(e.jobs))
	for _, j := range e.jobs {
		out = append(out, j.info())
	}
	e.mu.Unlock()
	slices.SortFunc(out, func(a, b JobInfo) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// Job returns the job named name, or false if no job has it.
func (e *Engine) Job(name string) (JobInfo, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	j := e.jobs[name]
	if j == nil {
		return JobInfo{}, false
	}
	return j.info(), true
}
