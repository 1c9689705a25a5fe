package core

import (
	"cmp"
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/jobkit/jobkit/scope"
)

// modelItem is a queued item of the model, at its position; modelCounts an item's
// failed attempts and collisions; modelHeld an item in progress, in batch b,
// added again while in progress if dirty.
type modelItem struct{ x, pos int }
type modelCounts struct{ att, col int }
type modelHeld struct {
	modelItem
	b     int
	dirty bool
}

// TestQueueAgainstAModel runs random adds, removes (in bursts that make
// fresh compact), takes, early settles and scopes that close with either
// exit against a model of the queue, under Rerun or not, with a capacity or
// not, and checks Queued, Info and Stats after every step. Two runs in
// three start the positions just below 2³², so that adds cross the point
// where the 32-bit positions the table keeps wrap around.
func TestQueueAgainstAModel(t *testing.T) {
	ctx := context.Background()
	seeds := uint64(300)
	if testing.Short() {
		seeds = 20 // -race -short in CI; the plain run checks 300
	}
	for seed := range seeds {
		r := rand.New(rand.NewPCG(seed, 7))
		rerun := r.IntN(2) == 0
		capacity := []int{0, 0, 50, 100}[r.IntN(4)]
		var q Queue[int]
		q.Init(Config{Rerun: rerun, Capacity: capacity, Timestamps: r.IntN(2) == 0})
		base := uint64(1<<32) - uint64(r.IntN(300))
		if r.IntN(3) == 0 {
			base = 0
		}
		q.fresh.reset(base)
		q.fresh.resize(minRing)
		next := 0
		var queued []modelItem
		held := map[int]*modelHeld{}
		counts := map[int]*modelCounts{}
		type ob struct {
			id    int
			s     *scope.Scope
			items []int
		}
		var open []*ob
		nb := 0
		nkeys := 20 + r.IntN(400)
		settle := func(x int, ok bool) {
			h := held[x]
			delete(held, x)
			if ok {
				delete(counts, x)
				if h.dirty {
					queued = append(queued, modelItem{x, next})
					next++
					counts[x] = &modelCounts{}
				}
				return
			}
			counts[x].att++
			i, _ := slices.BinarySearchFunc(queued, h.pos, func(e modelItem, p int) int { return cmp.Compare(e.pos, p) })
			queued = slices.Insert(queued, i, h.modelItem)
		}
		for step := range 600 {
			switch op := r.IntN(10); {
			case op < 4:
				reps := 1
				if r.IntN(8) == 0 {
					reps = 80
				}
				for range reps {
					x := r.IntN(nkeys)
					got := q.Add(x)
					want := false
					if slices.ContainsFunc(queued, func(e modelItem) bool { return e.x == x }) {
						counts[x].col++
					} else if h, ok := held[x]; ok {
						counts[x].col++
						if rerun && !h.dirty {
							h.dirty, want = true, true
						}
					} else if capacity == 0 || len(queued)+len(held) < capacity {
						queued = append(queued, modelItem{x, next})
						next++
						counts[x] = &modelCounts{}
						want = true
					}
					if got != want {
						t.Fatalf("seed %d step %d: Add(%d)=%v", seed, step, x, got)
					}
				}
			case op < 6:
				reps := 1
				if r.IntN(4) == 0 {
					reps = 40
				}
				for range reps {
					x := r.IntN(nkeys)
					i := slices.IndexFunc(queued, func(e modelItem) bool { return e.x == x })
					if got := q.Remove(x); got != (i >= 0) {
						t.Fatalf("seed %d step %d: Remove(%d)=%v", seed, step, x, got)
					}
					if i >= 0 {
						queued = slices.Delete(queued, i, i+1)
					}
				}
			case op < 7:
				if len(queued) == 0 {
					continue
				}
				max := 1 + r.IntN(5)
				s := scope.New()
				got, err := q.Take(ctx, s, max)
				n := min(max, len(queued))
				var want []int
				for _, e := range queued[:n] {
					held[e.x] = &modelHeld{modelItem: e, b: nb}
					want = append(want, e.x)
				}
				queued = slices.Delete(queued, 0, n)
				if err != nil || !slices.Equal(got, want) {
					t.Fatalf("seed %d step %d: Take=%v %v want %v", seed, step, got, err, want)
				}
				open = append(open, &ob{nb, s, got})
				nb++
			case op < 9:
				if len(open) == 0 {
					continue
				}
				i := r.IntN(len(open))
				b := open[i]
				if r.IntN(3) == 0 {
					x := b.items[r.IntN(len(b.items))]
					ok := r.IntN(2) == 0
					h, isHeld := held[x]
					want := isHeld && h.b == b.id
					var got bool
					if ok {
						got = q.Complete(b.s, x)
					} else {
						got = q.Fail(b.s, x)
					}
					if got != want {
						t.Fatalf("seed %d: settle one", seed)
					}
					if want {
						settle(x, ok)
					}
					continue
				}
				ok := r.IntN(2) == 0
				exit := scope.Succeeded()
				if !ok {
					exit = scope.Failed(errors.New("x"))
				}
				b.s.Close(exit)
				for _, x := range b.items {
					if h, isHeld := held[x]; isHeld && h.b == b.id {
						settle(x, ok)
					}
				}
				open = slices.Delete(open, i, i+1)
			default:
				// check
			}
			var wq []int
			for _, e := range queued {
				wq = append(wq, e.x)
			}
			if got := q.Queued(); !slices.Equal(got, wq) && !(len(got) == 0 && len(wq) == 0) {
				t.Fatalf("seed %d step %d: Queued=%v want %v", seed, step, got, wq)
			}
			for x := range nkeys {
				info, ok := q.Info(x)
				_, isH := held[x]
				isQ := slices.ContainsFunc(queued, func(e modelItem) bool { return e.x == x })
				if ok != (isH || isQ) || (ok && (info.State == InProgress) != isH) {
					t.Fatalf("seed %d step %d: Info(%d)=%v %v", seed, step, x, info, ok)
				}
				if ok && (info.Attempts != counts[x].att || info.Collisions != min(counts[x].col, 32767)) {
					t.Fatalf("seed %d step %d: Info(%d)=%+v want %+v", seed, step, x, info, *counts[x])
				}
			}
			st := q.Stats()
			if st.Queued != len(queued) || st.InProgress != len(held) {
				t.Fatalf("seed %d step %d: stats %+v", seed, step, st)
			}
		}
	}
}
