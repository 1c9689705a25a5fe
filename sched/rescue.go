package sched

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jobkit/jobkit/internal/errchain"
)

// Rescue describes one claim a reaper took back because its lease lapsed.
type Rescue struct {
	Queue string
	ID    ID
	// Gen is the generation of the run that lost the claim: a late result
	// of it is ignored.
	Gen uint64
	// Running reports that a handler was running: its context was
	// cancelled and its worker replaced. Otherwise the entry was waiting in
	// a batch and went back to pending.
	Running bool
	// Poisoned reports that the entry had been rescued MaxRescues times:
	// it is poisoned instead of run again.
	Poisoned bool
}

// EnableRescue gives every batch dispatched from now on a context of its
// own, which a rescue cancels (see Reap); without it a rescued handler's
// context is only cancelled at StopAndCancel. It costs a context, about
// one allocation, per batch. Package recovery calls it before Start. It
// does nothing on an Inspector not made by Scheduler.Inspector.
func (i *Inspector) EnableRescue() {
	if i.check(context.Background()) == nil {
		i.s.rescue.Store(true)
	}
}

// Reap renews the leases of the runs of queues with AutoRenew whose
// handlers have not returned, then rescues every claim whose lease ended
// before now − grace: a running one has its context cancelled and its
// entry run again without spending an attempt (or poisoned, past
// MaxRescues), and its worker is replaced, so that capacity does not dip
// while the old handler hangs; one waiting in a batch goes back to pending.
// now is the scheduler's Clock's time, as package recovery passes it.
//
// A claim held by no batch of this process (another process's, on a shared
// backend, or one of a Take still in flight) is rescued in the backend
// alone, fenced by the cutoff at which it lapsed (Outcome.LapsedBefore): a
// run that started or beat since keeps it. Every rescue is fenced by the
// run's generation too: a late result of the old run is ignored.
//
// Reap does not wait for a worker's call of the backend (a Start or Settle,
// which may wait on I/O): a batch whose lock stays held through such a call
// is left for the next sweep, its claims neither renewed nor rescued
// meanwhile, while the lapsed claims it is known not to hold are rescued
// as usual. A call that never returns holds its batch's claims and worker
// until StopAndCancel cancels the context it waits under: a backend bounds
// its calls' waits. Reap returns what it rescued. It is what a reaper
// (package recovery) calls once per interval.
func (i *Inspector) Reap(ctx context.Context, now time.Time, grace time.Duration) ([]Rescue, error) {
	if err := i.check(ctx); err != nil {
		return nil, err
	}
	if grace < 0 {
		return nil, fmt.Errorf("%w: grace %v < 0", ErrInvalid, grace)
	}
	for _, b := range i.s.lives() {
		b.renew(now)
	}
	rs, err := i.queues(ctx, &Query{})
	if err != nil {
		return nil, err
	}
	var out []Rescue
	var errs []error
	for _, r := range rs {
		// Appended to out as they are done, so that a backend that panics
		// after a rescue loses none of those done from the answer (the
		// reaper counts them).
		err := r.base().call("Expired or Settle", func() error {
			return r.reap(ctx, now, now.Add(-grace), &out)
		})
		if err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

// Abandoned returns how many handlers of rescued or abandoned runs have not
// returned yet: Go cannot stop a goroutine, so each keeps one.
func (i *Inspector) Abandoned() int {
	if i.check(context.Background()) != nil {
		return 0 // not made by Scheduler.Inspector: nothing abandoned
	}
	return int(i.s.abandoned.Load())
}

// reap rescues the claims of q whose leases ended before before, and
// appends each rescue to *out as soon as it is done.
//
// The live batches are listed after Expired read the claims, so that a
// batch that went live before then is asked, under its lock, which sees a
// lease its run renewed since. A batch still going live (its Take in
// flight) is not listed: its claims are rescued in the backend, fenced by
// before, so that either the rescue comes first and the batch's Start
// finds the claim stale, or the Start renewed the lease and the rescue is
// stale.
func (q *Queue[T, K]) reap(ctx context.Context, now, before time.Time, out *[]Rescue) error {
	claims, err := q.backend.Expired(ctx, before, nil)
	if err != nil || len(claims) == 0 {
		return err
	}
	lives := q.s.lives()
	for i := range claims {
		c := &claims[i]
		r := Rescue{Queue: q.name, ID: c.ID, Gen: c.Gen}
		var res rescueResult
		busy := false
		for _, b := range lives {
			if res = b.rescue(&q.queueBase, c.ID, c.Gen, before); res.held {
				break
			}
			busy = busy || res.busy
		}
		r.Running, r.Poisoned = res.abandoned, res.poisoned
		switch {
		case res.held && !res.rescued:
			continue // its lease was renewed since Expired read it
		case !res.held && busy:
			// A batch in a backend call may hold it (one whose claims
			// are not known: rescues off): left for the next sweep, not
			// settled behind the batch's back.
			continue
		}
		if !res.held {
			// Not in this process's hands: another process's, or its batch
			// ended since Expired looked. The backend fences it.
			// Fenced by the lease too: another process's run may have
			// started or beaten since Expired read it, in the same
			// generation.
			o := Outcome{Kind: OutcomeRerun, Finished: now, Rescued: true, LapsedBefore: before}
			if c.Rescues >= q.maxRescues {
				o.Kind, o.Err, r.Poisoned = OutcomePoisoned, lapsedTooOften(c, now), true
			}
			if err := q.backend.Settle(ctx, c, o); err != nil {
				if errchain.Is(err, ErrStale) || errchain.Is(err, ErrNotFound) {
					continue
				}
				return err
			}
			if o.Kind == OutcomePoisoned {
				q.s.retained(&q.queueBase, o.Kind, now)
			}
		}
		*out = append(*out, r)
	}
	return nil
}

// lapsedTooOften is the error of claim c, poisoned as it is rescued at now:
// its lease lapsed once more than the queue's MaxRescues allows.
func lapsedTooOften[T any, K comparable](c *Claim[T, K], now time.Time) *RunError {
	return &RunError{Attempt: c.Attempts + 1, At: now, Type: "rescue",
		Message: fmt.Sprintf("poisoned: its lease lapsed %d times", c.Rescues+1)}
}
