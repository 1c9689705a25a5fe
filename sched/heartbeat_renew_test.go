package sched_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// slowRenewBackend is sched's in-memory backend whose Renew, once armed,
// waits for its context, as a durable backend's does on a slow network
// (the Backend contract: "ctx bounds the call's waits and I/O").
type slowRenewBackend struct {
	sched.Backend[int, int]
	armed   atomic.Bool
	entered chan struct{}
}

func (b *slowRenewBackend) Renew(ctx context.Context, id sched.ID, gen uint64, until time.Time) error {
	if b.armed.CompareAndSwap(true, false) {
		close(b.entered)
		<-ctx.Done()
		return ctx.Err()
	}
	return b.Backend.Renew(ctx, id, gen, until)
}

// A heartbeat whose Renew waits on a slow backend must not keep the reaper
// from rescuing the run whose lease lapsed: the rescue is what cancels the
// run's context, and so the Renew. (Were the batch's lock held across the
// backend's Renew, the reaper would wait for the heartbeat, which waits
// for the rescue, for ever, and every other queue's rescues with it.)
func TestReapIsNotBlockedByAHeartbeatInFlight(t *testing.T) {
	ctx := context.Background()
	s := must.New(t, sched.Config{Workers: 1, Loops: 1, Logger: quiet})
	in := s.Inspector()
	in.EnableRescue()
	be := &slowRenewBackend{Backend: sched.NewMemory[int, int](), entered: make(chan struct{})}
	be.armed.Store(true)
	beat := make(chan error, 1)
	q, err := sched.NewQueue(s, "q", sched.QueueConfig[int, int]{
		Lease: time.Second, Backend: be,
		Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
			if j.Reruns > 0 {
				return nil // the run after the rescue: its heartbeat is not the one under test
			}
			err := j.Heartbeat(ctx)
			beat <- err
			return err
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := q.Add(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_ = s.StopAndCancel(sctx)
	}()
	<-be.entered // the handler beats; its Renew waits
	type reaped struct {
		rs  []sched.Rescue
		err error
	}
	done := make(chan reaped, 1)
	go func() {
		rs, err := in.Reap(ctx, time.Now().Add(time.Hour), 0) // the lease lapsed long ago
		done <- reaped{rs, err}
	}()
	select {
	case r := <-done:
		if r.err != nil || len(r.rs) != 1 || !r.rs[0].Running {
			t.Errorf("Reap = %+v, %v; want the running claim rescued", r.rs, r.err)
		}
	case <-time.After(30 * time.Second): // a deadlock detector, not a synchronisation
		t.Fatal("Reap still blocked after 30s: it waits for the batch's lock, held by a Heartbeat whose Renew waits for the rescue")
	}
	if err := <-beat; err == nil {
		t.Errorf("Heartbeat of a rescued run = nil, want an error")
	}
}

// gatedRenewBackend renews, then, once armed, waits for release before it
// returns: a heartbeat the backend accepted, not yet back in the scheduler.
type gatedRenewBackend struct {
	sched.Backend[int, int]
	armed            atomic.Bool
	entered, release chan struct{}
}

func (b *gatedRenewBackend) Renew(ctx context.Context, id sched.ID, gen uint64, until time.Time) error {
	err := b.Backend.Renew(ctx, id, gen, until)
	if b.armed.CompareAndSwap(true, false) {
		close(b.entered)
		<-b.release
	}
	return err
}

// A rescue that comes while a heartbeat's renewal is on its way back wins,
// and the heartbeat says so: it returns an error, not nil for a run that
// was rescued.
func TestHeartbeatOvertakenByARescueIsStale(t *testing.T) {
	ctx := context.Background()
	s := must.New(t, sched.Config{Workers: 1, Loops: 1, Logger: quiet})
	in := s.Inspector()
	in.EnableRescue()
	be := &gatedRenewBackend{Backend: sched.NewMemory[int, int](), entered: make(chan struct{}), release: make(chan struct{})}
	be.armed.Store(true)
	beat := make(chan error, 1)
	q, err := sched.NewQueue(s, "q", sched.QueueConfig[int, int]{
		Lease: time.Second, Backend: be,
		Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
			if j.Reruns > 0 {
				return nil // the run after the rescue: its heartbeat is not the one under test
			}
			beat <- j.Heartbeat(ctx)
			<-ctx.Done()
			return ctx.Err()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := q.Add(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.StopAndCancel(ctx); err != nil {
			t.Error(err)
		}
	}()
	<-be.entered
	// The renewal reached the backend, to an hour past the real now; the
	// reaper looks two hours on: the lease lapsed either way.
	rs, err := in.Reap(ctx, time.Now().Add(2*time.Hour), 0)
	if err != nil || len(rs) != 1 || !rs[0].Running {
		t.Errorf("Reap = %+v, %v; want the running claim rescued", rs, err)
	}
	close(be.release)
	if err := <-beat; err == nil {
		t.Errorf("Heartbeat of a run rescued before it returned = nil, want an error")
	}
}
