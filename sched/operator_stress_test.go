package sched_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/jobkit/jobkit/sched"
)

type spay struct {
	K     int
	Group string
}

// Operators at work on a busy scheduler: four goroutines add (delayed,
// disabled, with priorities), retry, delete (live entries too), disable,
// enable, pause and resume on three queues (one grouped, one capped) while
// handlers return every outcome. No entry runs twice at once, no group's
// batches overlap, no cap is exceeded, and after Stop the counts agree
// with the listing and nothing is lost. A delete or disable racing the
// close of a batch broke the counts here once (see closing_take_test.go).
func TestOperatorsOnABusySchedulerKeepTheInvariants(t *testing.T) {
	t.Parallel()
	s, err := sched.New(sched.Config{Workers: 6, Loops: 2, Logger: quiet,
		Retention: &sched.Retention{Succeeded: time.Hour, Failed: time.Hour, Cancelled: time.Hour, MaxSucceeded: 100000, MaxFailed: 100000, MaxCancelled: 100000}})
	if err != nil {
		t.Fatal(err)
	}
	var invs []*invariants // one a queue: see core_review_test.go
	mk := func(name string, grouped bool, maxc int) *sched.Queue[spay, int] {
		inv := newInvariants(t, maxc)
		invs = append(invs, inv)
		cfg := sched.QueueConfig[spay, int]{
			Key:            func(p spay) int { return p.K },
			MaxConcurrency: maxc,
			BatchSize:      3,
			Retry:          &sched.RetryPolicy{MaxRetries: 2, Base: time.Millisecond},
			MaxReruns:      3,
			Handler: func(ctx context.Context, j *sched.Job[spay, int]) error {
				inv.enter(int(j.ID), j.Group)
				defer inv.leave(int(j.ID), j.Group)
				switch rand.IntN(7) {
				case 0:
					return errors.New("boom")
				case 1:
					return sched.Snooze(time.Millisecond)
				case 2:
					return sched.Rerun(nil)
				case 3:
					return sched.Cancel(nil)
				case 4:
					return sched.Permanent(nil)
				}
				return nil
			},
		}
		if grouped {
			cfg.Group = func(p spay) string { return p.Group }
		}
		q, err := sched.NewQueue(s, name, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	qa := mk("a", false, 0)
	qb := mk("b", true, 0)
	qc := mk("c", false, 2)
	qs := []*sched.Queue[spay, int]{qa, qb, qc}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	in := s.Inspector()
	ctx := context.Background()
	var wg sync.WaitGroup
	ops := 1500
	if testing.Short() {
		ops = 500
	}
	for w := range 4 {
		wg.Go(func() {
			for i := range ops {
				q := qs[rand.IntN(3)]
				switch rand.IntN(12) {
				case 0, 1, 2, 3, 4:
					var opts []sched.AddOption
					if rand.IntN(4) == 0 {
						opts = append(opts, sched.After(time.Duration(rand.IntN(3))*time.Millisecond))
					}
					if rand.IntN(6) == 0 {
						opts = append(opts, sched.Disabled())
					}
					if rand.IntN(3) == 0 {
						opts = append(opts, sched.WithPriority(1+rand.IntN(5)))
					}
					_, _, _ = q.Add(ctx, spay{K: rand.IntN(200), Group: fmt.Sprint("g", rand.IntN(3))}, opts...)
				case 5:
					_, _ = in.Retry(ctx, sched.Query{Queues: []string{q.Name()}, States: []sched.State{sched.StateFailed, sched.StateCancelled, sched.StatePoisoned}}, rand.IntN(2) == 0)
				case 6:
					_, _ = in.Delete(ctx, sched.Query{Queues: []string{q.Name()}, States: []sched.State{sched.State(1 + rand.IntN(8))}})
				case 7:
					id := sched.ID(1 + rand.IntN(i*4/3+w+1))
					if rand.IntN(2) == 0 {
						_ = q.Disable(ctx, id)
					} else {
						_ = q.Enable(ctx, id)
					}
				case 8:
					if rand.IntN(2) == 0 {
						q.Pause()
					} else {
						q.Resume()
					}
				case 9:
					_ = in.RetryID(ctx, q.Name(), sched.ID(1+rand.IntN(i+1)), true)
				case 10:
					_ = in.DeleteID(ctx, q.Name(), sched.ID(1+rand.IntN(i+1)))
				case 11:
					_, _ = q.Counts(ctx)
					for range in.List(ctx, sched.Query{Queues: []string{q.Name()}}) {
					}
				}
			}
		})
	}
	wg.Wait()
	for _, q := range qs {
		q.Resume()
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	for _, inv := range invs {
		inv.report()
	}
	for _, q := range qs {
		c, err := q.Counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		byState := map[sched.State]int{}
		dis := 0
		for sm, err := range in.List(ctx, sched.Query{Queues: []string{q.Name()}}) {
			if err != nil {
				t.Fatal(err)
			}
			byState[sm.State]++
			if sm.Disabled && sm.State.Live() {
				dis++
			}
		}
		for st := sched.StateDelayed; st <= sched.StatePoisoned; st++ {
			if c.Of(st) != byState[st] {
				t.Errorf("queue %s: Counts %v=%d, List %d", q.Name(), st, c.Of(st), byState[st])
			}
		}
		if dis != c.Disabled {
			t.Errorf("queue %s: Counts.Disabled=%d, List %d", q.Name(), c.Disabled, dis)
		}
		if c.Added != c.Live()+c.Retained()+c.Expired+c.Deleted {
			t.Errorf("queue %s: Added %d != live %d + retained %d + expired %d + deleted %d", q.Name(), c.Added, c.Live(), c.Retained(), c.Expired, c.Deleted)
		}
		if c.Awaiting != 0 || c.Running != 0 {
			t.Errorf("queue %s: after Stop: %+v", q.Name(), c)
		}
	}
}
