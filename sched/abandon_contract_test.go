package sched_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// Entry: "Reruns [count] those [runs] that ended without a result of their
// own (Rerun, a shutdown, a rescue), Rescues those of them the reaper
// rescued". A run abandoned at StopAndCancel is a shutdown, not a rescue:
// it counts a rerun and no rescue.
func TestRunAbandonedAtStopAndCancelCountsNoRescue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := must.New(t, sched.Config{Workers: 1, Logger: quiet})
		release := make(chan struct{})
		defer close(release)
		q := must.Queue(t, s, "q", sched.QueueConfig[string, string]{
			Handler: func(ctx context.Context, j *sched.Job[string, string]) error {
				<-release // ignores its context: StopAndCancel abandons it
				return nil
			},
		})
		id := must.Add(t, q, "a")
		s.Inspector().EnableRescue()
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // a runs
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_ = s.StopAndCancel(sctx) // gives up on the hung run
		e, err := q.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if e.Reruns != 1 || e.Rescues != 0 {
			t.Errorf("after StopAndCancel abandoned its run: Reruns %d, Rescues %d; want 1, 0", e.Reruns, e.Rescues)
		}
	})
}

// QueueConfig: MaxReruns bounds the runs that end without a result of their
// own (Rerun, a shutdown); a rescue is bounded by MaxRescues: "the next
// rescue poisons it". An entry that spent its MaxReruns and is then rescued
// for the first time runs again, not poisoned.
func TestRescueIsNotBoundedByMaxReruns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, in := rescuing(t, 1)
		release := make(chan struct{})
		var runs atomic.Int32
		q := must.Queue(t, s, "q", sched.QueueConfig[string, string]{
			Lease:      time.Second,
			MaxReruns:  1,
			MaxRescues: 3,
			Handler: func(ctx context.Context, j *sched.Job[string, string]) error {
				switch runs.Add(1) {
				case 1:
					return sched.Rerun(nil) // its one allowed rerun
				case 2:
					<-release // hangs: the reaper rescues it
				}
				return nil
			},
		})
		id := must.Add(t, q, "a")
		start(t, s, func() { close(release) })
		synctest.Wait() // the first run reran; the second hangs
		rs, err := in.Reap(ctx, time.Now().Add(time.Hour), 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 1 || !rs[0].Running || rs[0].Poisoned {
			t.Fatalf("Reap = %+v, want the running claim rescued, not poisoned", rs)
		}
		synctest.Wait()
		e, err := q.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if runs.Load() != 3 || e.State != sched.StateSucceeded || e.Rescues != 1 {
			t.Errorf("after its first rescue: %d runs, state %v, Rescues %d; want 3 runs, succeeded, 1 rescue", runs.Load(), e.State, e.Rescues)
		}
	})
}

// QueueConfig.MaxConcurrency bounds the entries that run at once; Reap: a
// rescued run's entry runs again, and its worker is replaced. A rescued run
// no longer counts toward the bound, though its handler has not returned:
// with MaxConcurrency 1, the entry runs again.
func TestRescuedRunLeavesRoomUnderMaxConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, in := rescuing(t, 2)
		release := make(chan struct{})
		var runs atomic.Int32
		q := must.Queue(t, s, "q", sched.QueueConfig[string, string]{
			Lease:          time.Second,
			MaxConcurrency: 1,
			Handler: func(ctx context.Context, j *sched.Job[string, string]) error {
				if runs.Add(1) == 1 {
					<-release // hangs, ignoring its context: the reaper rescues it
				}
				return nil
			},
		})
		must.Add(t, q, "a")
		start(t, s, func() { close(release) })
		synctest.Wait()
		if rs, err := in.Reap(ctx, time.Now().Add(time.Hour), 0); err != nil || len(rs) != 1 || !rs[0].Running {
			t.Fatalf("Reap = %+v, %v; want the running claim rescued", rs, err)
		}
		time.Sleep(time.Minute) // whatever a loop waits for
		synctest.Wait()
		if runs.Load() != 2 {
			t.Errorf("a minute after the rescue: %d runs, want 2", runs.Load())
		}
	})
}
