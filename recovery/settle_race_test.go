package recovery_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/recovery"
	"github.com/jobkit/jobkit/sched"
)

// racingBackend is sched's in-memory backend whose Expired, once armed,
// lets the run it reports lapsed finish (and settle) before the reaper acts
// on the report: the reaper racing a settle.
type racingBackend struct {
	sched.Backend[int, int]
	armed   bool
	release chan struct{} // closed by Expired: the lapsed run returns
}

func (b *racingBackend) Expired(ctx context.Context, before time.Time, dst []sched.Claim[int, int]) ([]sched.Claim[int, int], error) {
	out, err := b.Backend.Expired(ctx, before, dst)
	if b.armed && len(out) > 0 {
		b.armed = false
		close(b.release)
		synctest.Wait() // the run returned and settled; its batch's worker waits in the next run
	}
	return out, err
}

// newRacedReaper returns a scheduler of one worker and one loop, and a
// reaper on it that looks only when asked (Interval an hour) with a grace of
// a millisecond: the race tests drive it with Reap.
func newRacedReaper(t *testing.T) (*sched.Scheduler, *recovery.Reaper) {
	t.Helper()
	s, err := sched.New(sched.Config{Workers: 1, Loops: 1, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	r, err := recovery.New(s, recovery.Config{Interval: time.Hour, Grace: time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return s, r
}

// A run whose lease lapsed but that returns and settles before the reaper
// acts on Expired's report is not rescued: it succeeded, and the reaper
// neither counts nor reports a rescue of it.
func TestReaperRacingASettleRescuesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, r := newRacedReaper(t)
		gate := make(chan struct{})
		be := &racingBackend{Backend: sched.NewMemory[int, int](), release: make(chan struct{})}
		q, err := sched.NewQueue(s, "q", sched.QueueConfig[int, int]{
			Lease: time.Second, BatchSize: 2, Backend: be, Retention: &keep,
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				if j.Payload == 1 {
					<-be.release // a long run that outlives its lease, then succeeds
					return nil
				}
				<-gate // the batch's next run: keeps the batch live
				return nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		a, _, err := q.Add(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := q.Add(ctx, 2); err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute) // both leases lapsed long ago
		synctest.Wait()
		be.armed = true
		r.Look(ctx)
		if e, err := q.Get(ctx, a); err != nil || e.State != sched.StateSucceeded || e.Rescues != 0 {
			t.Errorf("entry a: %+v, %v; want succeeded, never rescued", e, err)
		}
		// Entry 2's claim lapsed while it waited in the batch, but its run
		// started (with a fresh lease) before the reaper acted: no rescue.
		if st := r.Stats(); st.Rescued != 0 {
			t.Errorf("Stats().Rescued = %d, want 0: a run that succeeded, or one that had just started, was counted as rescued", st.Rescued)
		}
		close(gate)
		if be.armed {
			close(be.release)
		}
		if err := s.Stop(ctx); err != nil {
			t.Error(err)
		}
	})
}
