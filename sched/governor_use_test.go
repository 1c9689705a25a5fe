package sched_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/governor"
	"github.com/jobkit/jobkit/internal/testkit"
	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// A Governor not made by New (a user mistake) does not make the scheduling
// loops spin ("while the governor refuses, the loops wait ... and nothing
// spins"): its Acquire's error leaves the queue alone for a second, as a
// stopped governor's does. Before, the loops picked the queue again at
// once, reading the clock about 750,000 times in 2 s, and nothing ran or
// was logged. synctest.Wait returns only once every goroutine of the bubble
// is durably blocked.
func TestAGovernorNotMadeByNewDoesNotSpinTheLoops(t *testing.T) {
	testkit.Within(t, "a scheduler with a zero Governor", func() {
		synctest.Test(t, func(t *testing.T) {
			s, err := sched.New(sched.Config{Workers: 2, Governor: new(governor.Governor), Logger: quiet})
			if err != nil {
				return // refused: fine
			}
			q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Handler: nop[int, int]})
			must.Add(t, q, 1)
			if err := s.Start(context.Background()); err != nil {
				return
			}
			defer s.Stop(context.Background())
			synctest.Wait() // hangs while a loop spins
		})
	})
}

// A governor shared by two schedulers and stopped while they run: nothing
// more is admitted, nothing spins, both Stops return, and the permits of
// the runs under way are released.
func TestASharedGovernorStoppedWhileRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		g, err := governor.New(governor.Config{Sampler: memSampler(400), Interval: time.Second, MaxCPUPercent: 100, MaxMemoryPercent: 100, Slots: 2, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Start(ctx); err != nil {
			t.Fatal(err)
		}
		release := make(chan struct{})
		var runs atomic.Int64
		h := func(ctx context.Context, j *sched.Job[int, int]) error { runs.Add(1); <-release; return nil }
		var qs []*sched.Queue[int, int]
		var ss []*sched.Scheduler
		for i := range 2 {
			s := must.New(t, sched.Config{Workers: 4, Governor: g, Logger: quiet})
			q := must.Queue(t, s, "same", sched.QueueConfig[int, int]{Handler: h, BatchSize: 1})
			for k := range 5 {
				must.Add(t, q, 10*i+k)
			}
			if err := s.Start(ctx); err != nil {
				t.Fatal(err)
			}
			qs, ss = append(qs, q), append(ss, s)
		}
		synctest.Wait()
		if n := runs.Load(); n != 2 {
			t.Fatalf("%d runs with 2 slots shared", n)
		}
		if err := g.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		close(release)
		synctest.Wait()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if n := runs.Load(); n != 2 {
			t.Fatalf("%d runs after the governor stopped", n)
		}
		for _, s := range ss {
			if err := s.Stop(ctx); err != nil {
				t.Fatal(err)
			}
		}
		for _, q := range qs {
			c := must.Counts(t, q)
			t.Logf("%+v", c)
		}
		if snap := g.Snapshot(); true {
			t.Logf("%v", snap)
		}
	})
}
