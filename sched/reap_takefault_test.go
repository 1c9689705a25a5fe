package sched_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
	"github.com/jobkit/jobkit/scope"
)

// exitingTake ends the goroutine (Goexit or panic) in its first Take that
// claims something, after claiming.
type exitingTake struct {
	*sched.Memory[int, int]
	panics bool
	once   atomic.Bool
}

func (b *exitingTake) Take(ctx context.Context, s *scope.Scope, r sched.TakeRequest, dst []sched.Claim[int, int]) ([]sched.Claim[int, int], error) {
	cs, err := b.Memory.Take(ctx, s, r, dst)
	if len(cs) > 0 && b.once.CompareAndSwap(false, true) {
		time.Sleep(2 * time.Second) // its lease lapses in flight
		if b.panics {
			panic("take")
		}
		runtime.Goexit()
	}
	return cs, err
}

// A Take that panics or exits after its lease lapsed holds up nothing:
// another process's lapsed claim is rescued by the next Reap.
func TestATakeFaultHoldsUpNoRescue(t *testing.T) {
	for _, panics := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			ctx := context.Background()
			mem := sched.NewMemory[int, int]()
			be := &exitingTake{Memory: mem, panics: panics}
			s, in := rescuing(t, 1)
			q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Lease: time.Second, Backend: be, Handler: nop[int, int]})
			q.Pause()
			other := must.Add(t, q, 1)
			now := time.Now()
			sc := scope.New()
			defer func() { _ = sc.Close(scope.Succeeded()) }()
			cs, err := mem.Take(ctx, sc, sched.TakeRequest{Now: now, Max: 1, LeaseUntil: now.Add(time.Second)}, nil)
			if err != nil || len(cs) != 1 {
				t.Fatal(len(cs), err)
			}
			must.Add(t, q, 2)
			start(t, s, nil)
			q.Resume()
			synctest.Wait()
			time.Sleep(3 * time.Second)
			synctest.Wait()
			rs, err := in.Reap(ctx, time.Now(), 0)
			found := false
			for _, r := range rs {
				found = found || r.ID == other
			}
			if err != nil || !found {
				t.Errorf("panics %v: Reap = %+v, %v; want the other process's claim %d rescued", panics, rs, err, other)
			}
		})
	}
}

// hangingTake blocks its first Take that claims something until release.
type hangingTake struct {
	*sched.Memory[int, int]
	release chan struct{}
	once    atomic.Bool
}

func (b *hangingTake) Take(ctx context.Context, s *scope.Scope, r sched.TakeRequest, dst []sched.Claim[int, int]) ([]sched.Claim[int, int], error) {
	cs, err := b.Memory.Take(ctx, s, r, dst)
	if len(cs) > 0 && b.once.CompareAndSwap(false, true) {
		<-b.release
	}
	return cs, err
}
