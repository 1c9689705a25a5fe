package cron

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
)

// Management calls from many goroutines, on the same and on different
// names, racing runs: afterwards every registered job has exactly one live
// entry, disabled exactly when paused, and no other name has one.
func TestConcurrentManagementKeepsOneEntryPerJob(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { manageAtRandom(t, seed) })
		})
	}
}

func manageAtRandom(t *testing.T, seed uint64) {
	ctx := context.Background()
	e, err := New(Config{Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	names := []string{"a", "b", "c"}
	fn := func(context.Context, time.Time) error {
		time.Sleep(300 * time.Millisecond)
		return errors.New("x")
	}
	var wg sync.WaitGroup
	for g := range uint64(6) {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(seed, g))
			for range 60 {
				name := names[r.IntN(len(names))]
				every, _ := Every(time.Duration(1+r.IntN(3))*time.Second, time.Time{})
				switch r.IntN(5) {
				case 0:
					_ = e.Register(ctx, name, every, fn, WithRetry(sched.RetryPolicy{MaxRetries: 2, Base: 100 * time.Millisecond}), WithMissed(RunOnce))
				case 1:
					_ = e.Unregister(ctx, name)
				case 2:
					_ = e.Pause(ctx, name)
				case 3:
					_ = e.Resume(ctx, name)
				case 4:
					_ = e.Update(ctx, name, every)
				}
				time.Sleep(time.Duration(r.IntN(500)) * time.Millisecond)
			}
		})
	}
	wg.Wait()
	time.Sleep(time.Second) // let the runs in progress settle
	synctest.Wait()
	live := map[string][]sched.Entry[string, string]{}
	for ent, err := range e.store.List(ctx, sched.Filter[string, string]{
		States: []sched.State{sched.StateDelayed, sched.StatePending, sched.StateAwaiting, sched.StateRunning},
	}) {
		if err != nil {
			t.Fatal(err)
		}
		live[ent.Key] = append(live[ent.Key], ent)
	}
	for _, name := range names {
		info, ok := e.Job(name)
		switch {
		case !ok && len(live[name]) != 0:
			t.Errorf("%s unregistered, live entries %+v", name, live[name])
		case ok && !info.Next.IsZero() && len(live[name]) != 1:
			t.Errorf("%s registered %+v, live entries %+v", name, info, live[name])
		case ok && len(live[name]) == 1 && live[name][0].Disabled != info.Paused:
			t.Errorf("%s paused %v, entry %+v", name, info.Paused, live[name][0])
		}
	}
	c, err := e.store.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.Added != c.Live()+c.Retained()+c.Expired+c.Deleted {
		t.Errorf("counts %+v", c)
	}
	if err := e.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}
