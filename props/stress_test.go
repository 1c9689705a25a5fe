package props

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobkit/jobkit/distinct"
	"github.com/jobkit/jobkit/scope"
)

// TestDistinctStress runs many producers and consumers on one queue with
// random batch sizes, failures, panics, cancellations and early settlements
// (a quarter of the consumers run Work loops, the rest Take), and checks that no item is ever held by two scopes at once and that every
// accepted add ends in exactly one completion: nothing lost, nothing run
// twice.
func TestDistinctStress(t *testing.T) {
	t.Parallel()
	const (
		producers = 8
		consumers = 16
		universe  = 256 // items are drawn from [0, universe): many duplicates
		adds      = 100_000
	)
	adds_ := adds
	if testing.Short() {
		adds_ = adds / 10
	}
	q, err := distinct.New[int](distinct.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var (
		accepted  [universe]atomic.Int64
		completed [universe]atomic.Int64
		held      [universe]atomic.Int32 // 1 while a scope holds the item
		failures  atomic.Int64
	)
	hold := func(x int) {
		if !held[x].CompareAndSwap(0, 1) {
			t.Errorf("item %d handed to two scopes at once", x)
		}
	}
	release := func(x int) { held[x].Store(0) }

	var producersWG, consumersWG sync.WaitGroup
	for p := range producers {
		producersWG.Go(func() {
			r := rand.New(rand.NewPCG(uint64(p), 1))
			for i := range adds_ / producers {
				if i%64 == 0 {
					runtime.Gosched() // let consumers in, so adds meet items in progress
				}
				if r.IntN(4) == 0 {
					xs := []int{r.IntN(universe), r.IntN(universe), r.IntN(universe)}
					rest := q.AddAll(xs)
					for _, x := range xs {
						accepted[x].Add(1)
					}
					for _, x := range rest {
						accepted[x].Add(-1)
					}
					continue
				}
				x := r.IntN(universe)
				if q.Add(x) {
					accepted[x].Add(1)
				}
			}
		})
	}
	errHandler := errors.New("handler failed")
	// finish ends a batch as a handler does: it releases the items not
	// settled early, counts the completions to come, and now and then fails
	// or panics instead.
	finish := func(r *rand.Rand, items []int, settled map[int]bool) error {
		outcome := r.IntN(10)
		for _, x := range items {
			if !settled[x] {
				release(x)
				if outcome >= 2 {
					completed[x].Add(1)
				}
			}
		}
		switch outcome {
		case 0:
			failures.Add(1)
			return errHandler
		case 1:
			failures.Add(1)
			panic("handler panicked")
		}
		return nil
	}
	// work runs a Work loop, which settles each batch and takes the next
	// under one lock, so it meets the other consumers' takes and
	// settlements differently.
	work := func(ctx context.Context, r *rand.Rand) error {
		return q.Work(ctx, 1+r.IntN(8), func(_ context.Context, items []int) error {
			for _, x := range items {
				hold(x)
			}
			return finish(r, items, nil)
		})
	}
	// take takes one batch under a scope and sometimes settles its first
	// item early.
	take := func(ctx context.Context, r *rand.Rand) error {
		return scope.Run(ctx, func(ctx context.Context, s *scope.Scope) error {
			items, err := q.Take(ctx, s, 1+r.IntN(8))
			if err != nil {
				return err
			}
			for _, x := range items {
				hold(x)
			}
			settled := map[int]bool{}
			if r.IntN(4) == 0 { // settle the first item early
				x := items[0]
				ok := r.IntN(2) == 0
				settled[x] = true
				release(x)
				if ok {
					completed[x].Add(1) // before Complete: a re-add may finish quickly
					if !q.Complete(s, x) {
						t.Errorf("Complete(%d) = false", x)
					}
				} else if !q.Fail(s, x) {
					t.Errorf("Fail(%d) = false", x)
				}
			}
			return finish(r, items, settled)
		})
	}
	for c := range consumers {
		consumersWG.Go(func() {
			r := rand.New(rand.NewPCG(uint64(c), 2))
			consume := take
			if c%4 == 3 {
				consume = work
			}
			for {
				ctx, cancel := context.WithCancel(context.Background())
				if r.IntN(10) == 0 { // some are cancelled while they wait
					go cancel()
				}
				err := consume(ctx, r)
				cancel()
				var p *scope.PanicError
				switch {
				case err == nil, errors.As(err, &p), errors.Is(err, context.Canceled), errors.Is(err, errHandler):
				case errors.Is(err, distinct.ErrClosed):
					return
				default:
					t.Errorf("consumer: %v", err)
					return
				}
			}
		})
	}
	producersWG.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := q.Drain(ctx); err != nil {
		t.Fatalf("Drain: %v (stats %+v)", err, q.Stats())
	}
	consumersWG.Wait()

	var total int64
	for x := range universe {
		if a, c := accepted[x].Load(), completed[x].Load(); a != c {
			t.Errorf("item %d: %d adds accepted, %d completions", x, a, c)
		}
		total += accepted[x].Load()
	}
	st := q.Stats()
	if int64(st.Added) != total || int64(st.Completed) != total || st.Queued != 0 || st.InProgress != 0 {
		t.Errorf("Stats %+v, want %d added and completed", st, total)
	}
	if failures.Load() == 0 || st.Requeued == 0 || total < 2*universe {
		t.Errorf("too little exercised: %d failures, %d requeued, %d accepted", failures.Load(), st.Requeued, total)
	}
	t.Logf("%d adds accepted, %d rejected, %d requeued", total, st.Rejected, st.Requeued)
}
