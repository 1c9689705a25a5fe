package sched_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// A cap lowered while batches run applies as their runs end: once it is 1,
// a worker whose run ended while another batch's run goes on starts no
// further entry of its batch, which goes back to pending. (From mutation
// testing: batch.start without its cap check, and the check comparing
// running > cap instead of ≥, survived every test.)
func TestALoweredCapStopsTheNextStartOfARunningBatch(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 2, Logger: quiet})
		gates := map[int]chan struct{}{}
		for k := 1; k <= 4; k++ {
			gates[k] = make(chan struct{})
		}
		var (
			mu            sync.Mutex
			running, most int
			started       []int
		)
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			BatchSize: 2,
			Handler: func(_ context.Context, j *sched.Job[int, int]) error {
				mu.Lock()
				running++
				most = max(most, running)
				started = append(started, j.Key)
				mu.Unlock()
				<-gates[j.Key]
				mu.Lock()
				running--
				mu.Unlock()
				return nil
			},
		})
		q.Pause() // so that the loops take two batches of two
		for k := 1; k <= 4; k++ {
			must.Add(t, q, k)
		}
		q.Resume()
		synctest.Wait()
		mu.Lock()
		if running != 2 {
			mu.Unlock()
			t.Fatalf("%d running (started %v), want the first entries of two batches", running, started)
		}
		first := started[0] // the batch of first holds first+1: 1 and 2, or 3 and 4
		mu.Unlock()
		if err := q.SetMaxConcurrency(1); err != nil {
			t.Fatal(err)
		}
		close(gates[first])
		synctest.Wait()
		mu.Lock()
		if running != 1 {
			t.Errorf("%d running after the cap was lowered to 1 and a run ended (started %v)", running, started)
		}
		mu.Unlock()
		for k, g := range gates {
			if k != first {
				close(g)
			}
		}
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if len(started) != 4 || most != 2 {
			t.Errorf("started %v, at most %d at once; want all 4, at most 2 (before the cap was lowered)", started, most)
		}
		if c := must.Counts(t, q); c.Succeeded+c.Expired != 4 {
			t.Errorf("counts %+v, want 4 runs ended", c)
		}
	})
}

// MaxConcurrency bounds the entries claimed, awaiting or running, not just
// those running: a batch larger than the cap's room takes only the room.
// (From mutation testing: dispatch computing the room as cap − in flight
// + 1 survived every test: a worker runs its batch one entry at a time,
// so no more than the cap ran, but an entry sat claimed past the cap.)
func TestTheCapBoundsTheEntriesClaimed(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 2, Logger: quiet})
		gate := make(chan struct{})
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			MaxConcurrency: 1,
			BatchSize:      4,
			Handler: func(context.Context, *sched.Job[int, int]) error {
				<-gate
				return nil
			},
		})
		q.Pause()
		for k := 1; k <= 4; k++ {
			must.Add(t, q, k)
		}
		q.Resume()
		synctest.Wait()
		if c := must.Counts(t, q); c.Running != 1 || c.Awaiting != 0 || c.Pending != 3 {
			t.Errorf("counts %+v with a cap of 1; want 1 running, none awaiting, 3 pending", c)
		}
		close(gate)
		synctest.Wait()
		if c := must.Counts(t, q); c.Succeeded+c.Expired != 4 {
			t.Errorf("counts %+v, want 4 runs ended", c)
		}
	})
}
