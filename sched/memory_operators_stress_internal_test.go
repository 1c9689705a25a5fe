package sched

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/jobkit/jobkit/scope"
)

func TestMemoryOperatorsBesideTakersClaimNothingTwice(t *testing.T) {
	for seed := range uint64(operatorsStressSeeds()) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { operatorsStress(t, seed) })
	}
}

func operatorsStress(t *testing.T, seed uint64) {
	ctx := context.Background()
	grouped := seed%2 == 0
	m := modelMemory(t, seed%3 == 0, seed%4 < 2, grouped)
	base := time.Unix(1000, 0)
	var clk sync.Mutex
	nowv := base
	now := func() time.Time { clk.Lock(); defer clk.Unlock(); return nowv }
	var mu sync.Mutex
	active := map[ID]uint64{} // ID → the generation of its claim not yet released
	release := func(id ID, gen uint64) {
		mu.Lock()
		if active[id] == gen {
			delete(active, id)
		}
		mu.Unlock()
	}
	var wg sync.WaitGroup
	kinds := []OutcomeKind{OutcomeSucceeded, OutcomeFailed, OutcomeCancelled, OutcomePoisoned, OutcomeRetry, OutcomeSnooze, OutcomeRerun}
	errc := make(chan string, 100)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(w)))
			for range 2000 {
				n := now()
				switch r.IntN(4) {
				case 0:
					a := NewEntry[int, int]{Key: r.IntN(30), Priority: 1 + r.IntN(3), Now: n, RunAt: n, Disabled: r.IntN(8) == 0}
					if grouped && r.IntN(3) != 0 {
						a.Group = []string{"a", "b", "c"}[r.IntN(3)]
					}
					if r.IntN(4) == 0 {
						a.RunAt = n.Add(time.Duration(1+r.IntN(4)) * time.Second)
					}
					_, _, _ = m.Add(ctx, a)
				default:
					s := scope.New()
					var lease time.Time
					if r.IntN(2) == 0 {
						lease = n.Add(time.Second)
					}
					// The claims are recorded under mu with the Take, so
					// that a reaper that rescues one (and releases it
					// first) finds it recorded: recorded after, a claim
					// rescued and taken again meanwhile looked claimed
					// twice.
					mu.Lock()
					cs, err := m.Take(ctx, s, TakeRequest{Now: n, Max: 1 + r.IntN(3), LeaseUntil: lease}, nil)
					if err != nil {
						mu.Unlock()
						panic(err)
					}
					for _, c := range cs {
						if g, ok := active[c.ID]; ok {
							select {
							case errc <- fmt.Sprintf("entry %d claimed again (gen %d) while its claim of gen %d is not released", c.ID, c.Gen, g):
							default:
							}
						}
						active[c.ID] = c.Gen
					}
					mu.Unlock()
					for i := range cs {
						c := &cs[i]
						if r.IntN(3) == 0 {
							continue // left to the scope's close
						}
						if r.IntN(2) == 0 {
							_ = m.Start(ctx, c, n, lease)
						}
						if r.IntN(3) == 0 {
							_ = m.Renew(ctx, c.ID, c.Gen, n.Add(2*time.Second))
						}
						release(c.ID, c.Gen)
						_ = m.Settle(ctx, c, Outcome{Kind: kinds[r.IntN(len(kinds))], Finished: n, At: n.Add(time.Duration(r.IntN(2)) * time.Second)})
					}
					for i := range cs {
						release(cs[i].ID, cs[i].Gen) // the rest go with the close
					}
					exit := scope.Succeeded()
					if r.IntN(2) == 0 {
						exit = scope.Failed(nil)
					}
					_ = s.Close(exit)
				}
			}
		}()
	}
	stop := make(chan struct{})
	var mg sync.WaitGroup
	mg.Add(1)
	go func() { // operators
		defer mg.Done()
		r := rand.New(rand.NewPCG(seed, 99))
		for {
			select {
			case <-stop:
				return
			default:
			}
			n := now()
			switch r.IntN(8) {
			case 0:
				_ = m.SetDisabled(ctx, ID(1+r.IntN(int(m.seqLocked())+1)), r.IntN(2) == 0)
			case 1:
				_, _ = m.Retry(ctx, Filter[int, int]{Match: func(e *Entry[int, int]) bool {
					_, _ = m.Get(ctx, e.ID) // calls back in
					return r.IntN(2) == 0
				}}, r.IntN(2) == 0, n)
			case 2:
				_, _ = m.Delete(ctx, Filter[int, int]{States: []State{StatePending, StateDelayed, StateFailed}, Key: func(k int) bool { return k%5 == 0 }})
			case 3:
				_, _, _ = m.Expire(ctx, n.Add(time.Duration(r.IntN(4000))*time.Second))
			case 4:
				_, _, _ = m.Promote(ctx, n)
			case 5:
				clk.Lock()
				nowv = nowv.Add(time.Second)
				clk.Unlock()
			case 6:
				cs, _ := m.Expired(ctx, n, nil)
				for i := range cs {
					// the reaper releases the claim it rescues
					release(cs[i].ID, cs[i].Gen)
					ok := m.Settle(ctx, &cs[i], Outcome{Kind: OutcomeRerun, Finished: n, Rescued: true}) == nil
					_ = ok
				}
			case 7:
				for range m.List(ctx, Filter[int, int]{}) {
				}
			}
		}
	}()
	wg.Wait()
	close(stop)
	mg.Wait()
	close(errc)
	for e := range errc {
		t.Error(e)
	}
	checkGrouped(t, m, -1, nil)
	checkListing(t, m, -1, nil)
}

func (m *Memory[T, K]) seqLocked() ID {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seq
}

func operatorsStressSeeds() int {
	if testing.Short() {
		return 4
	}
	return 12
}
