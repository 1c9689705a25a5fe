package sched_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// renewRaceBackend is sched's in-memory backend whose next Renew, once
// failRenew is set, fails as a network error would, and whose next Expired,
// once onExpired is set, calls it after it read its report of lapsed
// leases.
type renewRaceBackend struct {
	sched.Backend[int, int]
	failRenew atomic.Bool
	onExpired atomic.Pointer[func()]
}

func (b *renewRaceBackend) Renew(ctx context.Context, id sched.ID, gen uint64, until time.Time) error {
	if b.failRenew.CompareAndSwap(true, false) {
		return errors.New("connection reset")
	}
	return b.Backend.Renew(ctx, id, gen, until)
}

func (b *renewRaceBackend) Expired(ctx context.Context, before time.Time, dst []sched.Claim[int, int]) ([]sched.Claim[int, int], error) {
	out, err := b.Backend.Expired(ctx, before, dst)
	if f := b.onExpired.Swap(nil); f != nil {
		(*f)()
	}
	return out, err
}

// An automatic renewal, as a heartbeat does, keeps a run that a reaper
// found lapsed before the renewal and rescues after it: one reaper's Renew
// failed and its Expired reported the lease lapsed; another pass of the
// reaper renewed it, to no earlier than the first one's cutoff, before the
// first one acted. The run is kept, its context not cancelled. (From
// mutation testing: the AutoRenew renewal not recording the new lease in
// the batch, so that the rescue abandoned the run it had just renewed,
// survived every test.)
func TestAnAutoRenewalBetweenExpiredAndTheRescueKeepsTheRun(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, in := rescuing(t, 1)
		be := &renewRaceBackend{Backend: sched.NewMemory[int, int]()}
		done := make(chan struct{})
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Lease: time.Second, AutoRenew: true, Backend: be,
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				if j.Reruns > 0 {
					return nil // a run after a rescue: not the one under test
				}
				select {
				case <-done:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			},
		})
		must.Add(t, q, 1)
		start(t, s, func() { close(done) })
		synctest.Wait() // running, its lease from its start a second long
		now := time.Now().Add(time.Hour)
		var second []sched.Rescue
		renew := func() { // the other pass: its renewal reaches the backend
			var err error
			if second, err = in.Reap(ctx, now, 0); err != nil {
				t.Errorf("second Reap: %v", err)
			}
		}
		be.failRenew.Store(true)
		be.onExpired.Store(&renew)
		rs, err := in.Reap(ctx, now, 0)
		if be.failRenew.Load() {
			t.Fatal("the first Reap did not renew the run")
		}
		if err != nil || len(rs) != 0 || len(second) != 0 {
			t.Errorf("Reap = %+v, %v (the other pass: %+v); want nothing rescued: the run's lease was renewed to %v", rs, err, second, now.Add(time.Second))
		}
		if n := in.Abandoned(); n != 0 {
			t.Errorf("Abandoned = %d, want 0", n)
		}
	})
}
