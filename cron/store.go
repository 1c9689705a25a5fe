package cron

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jobkit/jobkit/sched"
)

// store is the backend of the engine's queue: sched's in-memory backend,
// with every settlement of a run passed through the engine. The handler's
// snooze is decided before the run's settlement reaches the backend, and a
// management call may change the job in between; so Settle decides the
// entry's fate again, under Engine.mu, from the job's state at that moment.
// A management call that finds the entry awaiting or running can then leave
// it alone: its settlement comes after the call's change and sees it.
type store struct {
	sched.Backend[string, string]
	e *Engine
}

// Settle implements sched.Backend. The entry snoozes until the job's
// wake-up, also one that has come (a catch-up: it is pending again at
// once); it ends (cancelled) when the job is gone, however the run ended,
// or has no further time;
// and it is made pending at once (a rerun) when the wake-up is earlier than
// the scheduler was told (it then snoozes properly), or when the run ended
// without a snooze (a handler that called runtime.Goexit).
//
// A catch-up is a snooze, not a rerun: an entry's Reruns count runs that
// ended without a result, for ever, and a reaper's TakenTooOften counts
// them (recovery), so that a healthy job that made up missed runs was
// alerted on at every run.
func (s *store) Settle(ctx context.Context, c *sched.Claim[string, string], o sched.Outcome) error {
	e := s.e
	e.mu.Lock()
	defer e.mu.Unlock()
	j := e.jobs[c.Key]
	var wake time.Time
	if j != nil {
		wake = j.wake(o.Finished)
	}
	switch {
	case o.Kind == sched.OutcomeRerun && j != nil: // the scheduler's own (a shutdown)
	case wake.IsZero():
		// The job is gone, or has no further time. A rerun of a job
		// gone ends too: pending again, its entry stayed live under the
		// name of no job.
		o.Kind, o.At = sched.OutcomeCancelled, time.Time{}
	case j.paused:
		// Paused entries are disabled: their time does not matter
		// until Resume places them, and a disabled entry that comes
		// due is not queued.
		o.Kind, o.At = sched.OutcomeSnooze, wake
	case o.Kind == sched.OutcomeSnooze && !wake.Before(o.At):
		o.Kind, o.At = sched.OutcomeSnooze, wake
	default:
		o.Kind, o.At = sched.OutcomeRerun, time.Time{}
	}
	return s.Backend.Settle(ctx, c, o)
}

// engineCall is the key of the context value that marks the engine's own
// calls on its queue (see Engine.own): only they delete, disable or enable
// the entries of registered jobs.
type engineCall struct{}

// own returns ctx marked as a call of e's own.
func (e *Engine) own(ctx context.Context) context.Context {
	return context.WithValue(ctx, engineCall{}, e)
}

// byOther reports whether ctx is not the engine's own (see Engine.own).
func (s *store) byOther(ctx context.Context) bool {
	return ctx != nil && ctx.Value(engineCall{}) != s.e
}

// Delete implements sched.Backend. On a shared scheduler the engine's
// queue is open to the scheduler's Inspector (and to schedhttp): the live
// entry of a registered job, the one the engine keeps for it, is deleted
// only by the engine (Unregister), and another call's Delete leaves it, as
// if its filter did not select it. Deleted there, the job stayed registered with
// no entry, and never ran again.
//
// Another call's Delete goes entry by entry: f, its Key and Match
// included, selects them as List does, outside any lock (they may call
// back); then each is deleted, its states and times checked again, under
// Engine.mu, after a look at the registered jobs. A job registered
// meanwhile, which adopts a live entry of its name, so keeps it.
func (s *store) Delete(ctx context.Context, f sched.Filter[string, string]) (int, error) {
	if !s.byOther(ctx) {
		return s.Backend.Delete(ctx, f)
	}
	n := 0
	for ent, err := range s.Backend.List(ctx, f) {
		if err != nil {
			return n, err
		}
		one := sched.Filter[string, string]{States: f.States, From: f.From, To: f.To, After: ent.ID - 1, Until: ent.ID}
		k := 0
		s.e.mu.Lock()
		if s.e.jobs[ent.Key] == nil || !ent.State.Live() { // a final entry is no job's own
			k, err = s.Backend.Delete(ctx, one) // no user code: Key and Match ran above
		}
		s.e.mu.Unlock()
		if n += k; err != nil {
			return n, err
		}
	}
	return n, nil
}

// SetDisabled implements sched.Backend. The entry of a registered job is
// disabled and enabled by the engine only (Pause, Resume): another call's
// returns an error wrapping sched.ErrWrongState. Disabled there, the job
// never ran again until it was paused and resumed.
func (s *store) SetDisabled(ctx context.Context, id sched.ID, disabled bool) error {
	if s.byOther(ctx) {
		// Under Engine.mu, so that no job is registered between the look
		// and the change (see Delete).
		s.e.mu.Lock()
		defer s.e.mu.Unlock()
		if ent, err := s.Backend.Get(ctx, id); err == nil && s.e.jobs[ent.Key] != nil {
			return fmt.Errorf("%w: the entry of cron job %q is the engine's: pause or resume the job", sched.ErrWrongState, ent.Key)
		}
	}
	return s.Backend.SetDisabled(ctx, id, disabled)
}

// place makes sure that job j has its one live entry, due no later than at,
// and disabled exactly when paused. It adds the entry if there is none; a
// delayed entry due after at is deleted and added again (sched has no call
// that moves an entry); an entry that is awaiting or running is left to its
// settlement (see store). It is called with opMu held and mu not held.
//
// If a call on the queue ends the goroutine (runtime.Goexit in the
// scheduler's Clock or in a metric, which the scheduler does not call
// again: it tells the time by the system clock from then on, and switches
// the queue's metrics off), place places the entry again on the
// goroutine's way out, so that the job is not left without it (an Add whose
// Clock ended the goroutine stored nothing); an error then has no one to
// go to.
func (e *Engine) place(ctx context.Context, j *job, at time.Time, paused bool) (err error) {
	// The job's state is changed already: its entry must follow it, even
	// if ctx ends meanwhile (the caller checked it before the change).
	ctx = context.WithoutCancel(ctx)
	p := protect(
		func() { err = e.placeEntry(ctx, j, at, paused) },
		func() { _ = e.placeEntry(ctx, j, at, paused) },
	)
	if p != nil {
		return p
	}
	return err
}

// placeEntry is place's work.
func (e *Engine) placeEntry(ctx context.Context, j *job, at time.Time, paused bool) error {
	opts := []sched.AddOption{sched.At(at)}
	if paused {
		opts = append(opts, sched.Disabled())
	}
	for {
		id, added, err := e.q.Add(ctx, j.name, opts...)
		if err != nil {
			if errors.Is(err, sched.ErrStopped) {
				err = fmt.Errorf("%w: %w", ErrStopped, err)
			}
			return err
		}
		e.mu.Lock()
		j.entry = id
		e.mu.Unlock()
		if added {
			return nil
		}
		ent, err := e.q.Get(ctx, id)
		switch {
		case errors.Is(err, sched.ErrNotFound):
			continue // deleted meanwhile: add again
		case err != nil:
			return err
		case !ent.State.Live():
			continue
		}
		if ent.Disabled != paused {
			if paused {
				err = e.q.Disable(e.own(ctx), id)
			} else {
				err = e.q.Enable(e.own(ctx), id)
			}
			switch {
			case errors.Is(err, sched.ErrNotFound) || errors.Is(err, sched.ErrWrongState):
				continue // ended meanwhile
			case err != nil:
				return err
			}
		}
		if paused || ent.State != sched.StateDelayed || !ent.RunAt.After(at) {
			return nil
		}
		if _, err := e.store.Delete(e.own(ctx), entryFilter(j.name, id)); err != nil {
			return err
		}
	}
}

// remove deletes the entry of the unregistered job name, whose ID is at
// least id, unless it is awaiting or running: its settlement then ends it.
func (e *Engine) remove(ctx context.Context, name string, id sched.ID) error {
	if id == 0 {
		return nil // no entry was ever added
	}
	_, err := e.store.Delete(e.own(ctx), entryFilter(name, id))
	return err
}

// entryFilter selects the delayed or pending entry of the job name whose ID
// is at least id. The in-memory backend scans the entries from id on: sched
// has no call that removes one entry by its ID.
func entryFilter(name string, id sched.ID) sched.Filter[string, string] {
	return sched.Filter[string, string]{
		States: []sched.State{sched.StateDelayed, sched.StatePending},
		Key:    func(k string) bool { return k == name },
		After:  id - 1,
	}
}
