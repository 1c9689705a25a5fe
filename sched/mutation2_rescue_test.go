package sched_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// An entry poisoned because its lease lapsed once more than MaxRescues
// allows counts that last lapse as a rescue too: with MaxRescues 1, its
// lease lapses twice and it ends poisoned with Rescues 2, as its error
// says. (From mutation testing: Memory.Settle not counting the rescue of a
// poisoned outcome marked Rescued survived every test.)
func TestAnEntryPoisonedByTheReaperCountsItsLastRescue(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
		in := s.Inspector()
		in.EnableRescue()
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Lease: time.Second, MaxRescues: 1,
			Handler: func(ctx context.Context, _ *sched.Job[int, int]) error {
				<-ctx.Done() // hangs until rescued
				return ctx.Err()
			},
		})
		id := must.Add(t, q, 1)
		for lapse := 1; lapse <= 2; lapse++ {
			synctest.Wait() // running
			time.Sleep(2 * time.Second)
			rs, err := in.Reap(ctx, time.Now(), 0)
			if err != nil || len(rs) != 1 {
				t.Fatalf("lapse %d: Reap = %+v, %v; want one rescue", lapse, rs, err)
			}
			if poisoned := lapse == 2; rs[0].Poisoned != poisoned {
				t.Fatalf("lapse %d: rescue %+v, want Poisoned %v", lapse, rs[0], poisoned)
			}
		}
		synctest.Wait()
		e, err := q.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if e.State != sched.StatePoisoned || e.Rescues != 2 {
			t.Errorf("entry %v with Rescues %d (errors %+v), want poisoned with Rescues 2: its lease lapsed twice", e.State, e.Rescues, e.Errors)
		}
	})
}

// A claim whose lease lapsed and that no batch of this scheduler holds (a
// claim of another process sharing the backend, gone) is rescued MaxRescues
// times, then poisoned: with MaxRescues 1, the second lapse poisons it.
// (From mutation testing: Reap's own rescue poisoning only past
// MaxRescues, one lapse late, survived every test; the rescues of the
// scheduler's own batches have a check of their own.)
func TestAClaimHeldByNoBatchIsPoisonedAfterMaxRescues(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		mem := sched.NewMemory[int, int]()
		s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Backend: mem, MaxRescues: 1, Handler: nop[int, int],
		})
		q.Pause() // only the other process, below, takes the entry
		id := must.Add(t, q, 1)
		for lapse := 1; lapse <= 2; lapse++ {
			rs := lapseElsewhere(t, mem, s.Inspector())
			if len(rs) != 1 {
				t.Fatalf("lapse %d: Reap = %+v; want one rescue", lapse, rs)
			}
			if poisoned := lapse == 2; rs[0].Poisoned != poisoned {
				t.Errorf("lapse %d: rescue %+v, want Poisoned %v", lapse, rs[0], poisoned)
			}
		}
		e, err := q.Get(ctx, id)
		if err != nil || e.State != sched.StatePoisoned || e.Rescues != 2 {
			t.Errorf("entry %v, rescues %d (%v); want poisoned after 2 lapses", e.State, e.Rescues, err)
		}
	})
}
