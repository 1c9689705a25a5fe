package sched_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// An entry that the reaper poisons itself, its claim held by no batch of
// this scheduler (another process's, gone), is deleted when its Failed
// retention ends: Reap schedules its expiry with the timekeeper, which has
// nothing else to wake it. (From mutation testing: Reap not telling the
// timekeeper of the entry it poisoned, which then stayed for ever,
// survived every test.)
func TestAnEntryPoisonedByReapOfAClaimHeldByNoBatchExpires(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		mem := sched.NewMemory[int, int]()
		s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Backend: mem, MaxRescues: 1, Handler: nop[int, int],
			Retention: &sched.Retention{Failed: time.Minute, MaxFailed: 10},
		})
		q.Pause() // only the other process, below, takes the entry
		id := must.Add(t, q, 1)
		for lapse := 1; lapse <= 2; lapse++ { // the second lapse poisons it
			if rs := lapseElsewhere(t, mem, s.Inspector()); len(rs) != 1 || rs[0].Poisoned != (lapse == 2) {
				t.Fatalf("lapse %d: Reap = %+v; want one rescue, poisoned at the second lapse", lapse, rs)
			}
		}
		synctest.Wait()
		if e, err := q.Get(ctx, id); err != nil || e.State != sched.StatePoisoned {
			t.Fatalf("entry %v, %v; want poisoned", e.State, err)
		}
		time.Sleep(time.Minute + time.Second) // its retention ends
		synctest.Wait()
		if e, err := q.Get(ctx, id); !errors.Is(err, sched.ErrNotFound) {
			t.Errorf("entry %v, %v a minute after it was poisoned; want ErrNotFound: its Failed retention ended", e.State, err)
		}
	})
}
