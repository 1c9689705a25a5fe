package sched_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
	"github.com/jobkit/jobkit/scope"
)

// slowTakeExpired is sched's in-memory backend whose first Take that
// claims something waits, once it claimed, until takeGo is closed (a
// durable backend's reply in flight), and whose first Expired that finds
// a lapsed claim waits, once it read them, until expGo is closed (its
// rows, read, on their way back): each closes its own channel as it
// starts to wait.
type slowTakeExpired struct {
	sched.Backend[int, int]
	taking, takeGo  chan struct{}
	expiring, expGo chan struct{}
	onceT, onceE    atomic.Bool
}

func newSlowTakeExpired() *slowTakeExpired {
	return &slowTakeExpired{
		Backend: sched.NewMemory[int, int](),
		taking:  make(chan struct{}), takeGo: make(chan struct{}),
		expiring: make(chan struct{}), expGo: make(chan struct{}),
	}
}

func (b *slowTakeExpired) Take(ctx context.Context, s *scope.Scope, r sched.TakeRequest, dst []sched.Claim[int, int]) ([]sched.Claim[int, int], error) {
	cs, err := b.Backend.Take(ctx, s, r, dst)
	if len(cs) > 0 && b.onceT.CompareAndSwap(false, true) {
		close(b.taking)
		<-b.takeGo
	}
	return cs, err
}

func (b *slowTakeExpired) Expired(ctx context.Context, now time.Time, dst []sched.Claim[int, int]) ([]sched.Claim[int, int], error) {
	cs, err := b.Backend.Expired(ctx, now, dst)
	if len(cs) > 0 && b.onceE.CompareAndSwap(false, true) {
		close(b.expiring)
		<-b.expGo
	}
	return cs, err
}

// A claim whose batch became live after Reap looked at the live batches,
// and whose run started after the backend's Expired read its lapsed lease,
// is not the claim of "no batch of this process": Reap must not settle it
// behind the batch's back. Here the loop's Take claims the entry with a
// lease of a second and its reply takes two; a Reap's Expired reads the
// lapsed claim meanwhile, and its reply comes once the batch is live and
// the run started (with a fresh lease). Before, Reap, which had taken its
// list of live batches before the batch was live, settled the claim as a
// rerun in the backend (its generation was still current): the entry ran
// again on the other worker while its first run, never cancelled, still
// ran.
func TestReapDoesNotRescueAClaimOfABatchThatWentLiveDuringIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, in := rescuing(t, 2)
		be := newSlowTakeExpired()
		var running, most atomic.Int32
		first, quit := make(chan struct{}), make(chan struct{})
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Lease: time.Second, BatchSize: 1, Backend: be,
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				n := running.Add(1)
				defer running.Add(-1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				if j.Reruns == 0 && j.Rescues == 0 {
					close(first)
					select {
					case <-ctx.Done():
						return ctx.Err()
					case <-quit:
					}
				}
				return nil
			},
		})
		start(t, s, func() { close(quit) })
		id := must.Add(t, q, 1)
		<-be.taking
		time.Sleep(2 * time.Second) // the Take's reply is late: its lease lapsed
		reaped := make(chan struct{})
		var rs []sched.Rescue
		var err error
		go func() {
			defer close(reaped)
			rs, err = in.Reap(ctx, time.Now(), 0)
		}()
		<-be.expiring
		close(be.takeGo) // the batch goes live, its run starts with a fresh lease
		<-first
		close(be.expGo)
		<-reaped
		synctest.Wait()
		if err != nil || len(rs) != 0 {
			t.Errorf("Reap = %+v, %v; want nothing rescued: the run started with a fresh lease", rs, err)
		}
		if n := most.Load(); n > 1 {
			t.Errorf("entry %d ran %d times at once", id, n)
		}
		if e, err := in.Get(ctx, "q", id); err != nil || e.State != sched.StateRunning || e.Reruns != 0 {
			t.Errorf("entry %d = %+v, %v; want its first run still running", id, e, err)
		}
	})
}

// The same, with the Expired's reply in before the Take's: the lapsed
// claim is in no live batch yet, and the loop's Take, still in flight,
// holds it (its lease, as the Take asked, lapsed): Reap rescues it in the
// backend, fenced by its cutoff, and the batch's Start then finds it stale
// and skips it; the entry runs once, when it is taken again.
func TestReapOfAClaimOfATakeInFlightRunsItOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, in := rescuing(t, 2)
		be := newSlowTakeExpired()
		close(be.expGo)
		var runs atomic.Int32
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Lease: time.Second, BatchSize: 1, Backend: be,
			Handler: func(context.Context, *sched.Job[int, int]) error { runs.Add(1); return nil },
		})
		start(t, s, nil)
		id := must.Add(t, q, 1)
		<-be.taking
		time.Sleep(2 * time.Second) // the Take's reply is late: its lease lapsed
		rs, err := in.Reap(ctx, time.Now(), 0)
		if err != nil || len(rs) != 1 || rs[0].ID != id || rs[0].Running {
			t.Errorf("Reap = %+v, %v; want the lapsed claim of the Take in flight rescued, not running", rs, err)
		}
		close(be.takeGo)
		synctest.Wait()
		if e, err := in.Get(ctx, "q", id); err != nil || e.State != sched.StateSucceeded || e.Reruns != 0 || runs.Load() != 1 {
			t.Errorf("entry %d = %+v, %v, ran %d times; want it succeeded in one run", id, e, err, runs.Load())
		}
	})
}

// hookedExpired is sched's in-memory backend that calls after once its
// Expired has read the lapsed claims, before the reaper acts on them.
type hookedExpired struct {
	*sched.Memory[int, int]
	after func()
}

func (b *hookedExpired) Expired(ctx context.Context, before time.Time, dst []sched.Claim[int, int]) ([]sched.Claim[int, int], error) {
	out, err := b.Memory.Expired(ctx, before, dst)
	if f := b.after; f != nil {
		b.after = nil
		f()
	}
	return out, err
}

// Another process's run whose lease lapsed, and which beats (renews it)
// after the reaper read it lapsed, keeps its claim: the reaper's rescue in
// the backend is fenced by the cutoff at which it found the lease lapsed,
// not only by the run's generation, which a heartbeat (or a Start) does not
// change. Before, the rescue made the entry pending while the other
// process's run went on: it would run twice at once.
func TestReapOfAnotherProcesssClaimThatBeatSinceRescuesNothing(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		mem := sched.NewMemory[int, int]()
		be := &hookedExpired{Memory: mem}
		s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Backend: be, Handler: nop[int, int]})
		q.Pause() // only the other process, below, takes the entry
		id := must.Add(t, q, 1)
		c := claimElsewhere(t, mem)
		time.Sleep(2 * time.Second) // the other process's lease lapses...
		be.after = func() {         // ...and it beats once the reaper read it
			if err := mem.Renew(ctx, c.ID, c.Gen, time.Now().Add(time.Hour)); err != nil {
				t.Error(err)
			}
		}
		if rs, err := s.Inspector().Reap(ctx, time.Now(), 0); err != nil || len(rs) != 0 {
			t.Errorf("Reap = %+v, %v; want nothing rescued: the run beat since", rs, err)
		}
		if e, err := q.Get(ctx, id); err != nil || e.State != sched.StateRunning || e.Rescues != 0 {
			t.Errorf("entry %+v, %v; want it still running, not rescued", e, err)
		}
	})
}
