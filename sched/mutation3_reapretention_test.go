package sched_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
	"github.com/jobkit/jobkit/scope"
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
			now := time.Now()
			sc := scope.New()
			cs, err := mem.Take(ctx, sc, sched.TakeRequest{Now: now, Max: 1, LeaseUntil: now.Add(time.Second)}, nil)
			if err != nil || len(cs) != 1 {
				t.Fatalf("lapse %d: Take = %d claims, %v; want 1", lapse, len(cs), err)
			}
			if err := mem.Start(ctx, &cs[0], now, now.Add(time.Second)); err != nil {
				t.Fatal(err)
			}
			time.Sleep(2 * time.Second) // the other process is gone: its lease lapses
			if rs, err := s.Inspector().Reap(ctx, time.Now(), 0); err != nil || len(rs) != 1 || rs[0].Poisoned != (lapse == 2) {
				t.Fatalf("lapse %d: Reap = %+v, %v; want one rescue, poisoned at the second lapse", lapse, rs, err)
			}
			_ = sc.Close(scope.Succeeded())
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
