package sched_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
	"github.com/jobkit/jobkit/scope"
)

// slowSettle is sched's in-memory backend whose Settle of the entry with
// key slow waits, as a durable backend's I/O may, until release is closed
// or its context is done, the first time; settling is closed once it waits, and settled
// once it returned, with its error in err.
type slowSettle struct {
	sched.Backend[int, int]
	slow              int
	settling, settled chan struct{}
	release           chan struct{}
	err               error
	once              atomic.Bool
}

func (b *slowSettle) Settle(ctx context.Context, c *sched.Claim[int, int], o sched.Outcome) error {
	if c.Key == b.slow && b.once.CompareAndSwap(false, true) { // its first Settle
		close(b.settling)
		select {
		case <-b.release:
		case <-ctx.Done():
		}
		defer close(b.settled)
		b.err = b.Backend.Settle(ctx, c, o)
		return b.err
	}
	return b.Backend.Settle(ctx, c, o)
}

// A worker's backend call that waits holds its batch's lock, and nothing
// cancels the run's context it waits under but a rescue: Reap must not wait
// for it. Here one worker's Settle waits while another run hangs past its
// lease; Reap rescues the hung run, leaves the settling one for a later
// sweep, and returns. Before, Reap waited for the settling batch's lock
// until the Settle returned, and with it every rescue and renewal.
func TestReapDoesNotWaitForABatchInABackendCall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, in := rescuing(t, 2)
	be := &slowSettle{Backend: sched.NewMemory[int, int](), slow: 1, settling: make(chan struct{}), settled: make(chan struct{}), release: make(chan struct{})}
	hung, quit := make(chan struct{}), make(chan struct{})
	q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
		Lease: time.Second, BatchSize: 1, Backend: be,
		Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
			if j.Payload == 2 && j.Reruns == 0 {
				close(hung)
				select { // until rescued
				case <-ctx.Done():
					return ctx.Err()
				case <-quit: // the test failed
					return nil
				}
			}
			return nil
		},
	})
	id1 := must.Add(t, q, 1)
	id2 := must.Add(t, q, 2)
	start(t, s, func() {
		close(quit)
		select {
		case <-be.release:
		default:
			close(be.release)
		}
	})
	<-be.settling
	<-hung
	reaped := make(chan struct{})
	var rs []sched.Rescue
	var err error
	go func() {
		defer close(reaped)
		// Both leases lapsed an hour ago, by this Reap's clock.
		rs, err = in.Reap(ctx, time.Now().Add(time.Hour), 0)
	}()
	select {
	case <-reaped:
	case <-time.After(30 * time.Second): // a bound on failure, not a wait for success
		t.Fatal("Reap still waits for the lock of a batch whose Settle waits")
	}
	if err != nil || len(rs) != 1 || rs[0].ID != id2 || !rs[0].Running {
		t.Fatalf("Reap = %+v, %v; want the hung run %d rescued, and the settling one left alone", rs, err, id2)
	}
	close(be.release)
	<-be.settled
	// The settling run's result stands: it was not rescued behind its back.
	if e, err := in.Get(ctx, "q", id1); be.err != nil || err != nil || e.State != sched.StateSucceeded {
		t.Errorf("after the slow Settle (%v): entry %d = %+v, %v; want it succeeded", be.err, id1, e, err)
	}
}

// A batch whose worker waits in a backend call holds up its own claims
// only (the Backend contract: "holds up its own batch only"). Here queue
// q's one worker waits in the Settle of its run, and another process's
// claim of q, on the shared backend, lapsed: Reap must rescue it. Before,
// Reap left every lapsed claim of q that no non-busy batch held for the
// next sweep, since the busy batch might hold it, for as long as the
// Settle waited.
func TestABusyBatchDoesNotHoldUpAnotherProcesssClaim(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, in := rescuing(t, 1)
	mem := sched.NewMemory[int, int]()
	be := &slowSettle{Backend: mem, slow: 1, settling: make(chan struct{}), settled: make(chan struct{}), release: make(chan struct{})}
	q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Lease: time.Second, BatchSize: 1, Backend: be, Handler: nop[int, int]})
	must.Add(t, q, 1)
	start(t, s, func() {
		select {
		case <-be.release:
		default:
			close(be.release)
		}
	})
	<-be.settling
	q.Pause() // the other process takes the next entry
	id2 := must.Add(t, q, 2)
	sc := scope.New()
	defer func() { _ = sc.Close(scope.Succeeded()) }()
	now := time.Now()
	cs, err := mem.Take(ctx, sc, sched.TakeRequest{Now: now, Max: 1, LeaseUntil: now.Add(time.Second)}, nil)
	if err != nil || len(cs) != 1 || cs[0].ID != id2 {
		t.Fatalf("Take = %+v, %v; want entry %d", cs, err, id2)
	}
	if err := mem.Start(ctx, &cs[0], now, now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	// Both leases lapsed an hour ago, by this Reap's clock.
	rs, err := in.Reap(ctx, now.Add(time.Hour), 0)
	if err != nil || len(rs) != 1 || rs[0].ID != id2 || rs[0].Running {
		t.Fatalf("Reap = %+v, %v; want the other process's claim of %d rescued, the settling run left alone", rs, err, id2)
	}
	if e, err := in.Get(ctx, "q", id2); err != nil || e.State != sched.StatePending || e.Rescues != 1 {
		t.Errorf("entry %d = %+v, %v; want it pending again, rescued once", id2, e, err)
	}
}
