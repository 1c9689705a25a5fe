package sched_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"testing"
	"testing/synctest"
	"time"
	"weak"

	"pgregory.net/rapid"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// wrapped embeds Memory and counts its Adds: AddAll must not go around
// the Add of a backend that embeds Memory (its Add may do more).
type wrapped struct {
	*sched.Memory[int, int]
	adds int
}

func (w *wrapped) Add(ctx context.Context, a sched.NewEntry[int, int]) (sched.ID, bool, error) {
	w.adds++
	return w.Memory.Add(ctx, a)
}

// entries lists queue q's entries as (ID, key, state, priority, delayed)
// in ID order, for comparing two queues.
func entries(t *testing.T, s *sched.Scheduler, q string) []string {
	t.Helper()
	var out []string
	for e, err := range s.Inspector().List(context.Background(), sched.Query{Queues: []string{q}}) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d %s %v p%d %v", e.ID, e.Key, e.State, e.Priority, e.RunAt))
	}
	return out
}

// AddAll gives what as many calls of Add give, one after another: the
// same results (IDs, and duplicates refused, of live entries and of
// payloads before in the same call, across AddAll's chunks of 64), the
// same entries in the same order, the same counts. It does so on Memory,
// which adds a chunk under one hold of its lock, and on a backend that
// embeds Memory, whose Add it calls for each payload. The model is a
// queue on Memory to which each payload is added with Add.
func TestAddAllIsAddAfterAdd(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(rt *rapid.T) {
		s := must.New(t, sched.Config{Workers: 1})
		w := &wrapped{Memory: sched.NewMemory[int, int]()}
		nop := func(context.Context, *sched.Job[int, int]) error { return nil }
		real := must.Queue(t, s, "real", sched.QueueConfig[int, int]{Handler: nop})
		embed := must.Queue(t, s, "embed", sched.QueueConfig[int, int]{Handler: nop, Backend: w})
		model := must.Queue(t, s, "model", sched.QueueConfig[int, int]{Handler: nop})
		ctx := context.Background()
		keys := rapid.IntRange(0, 150)
		for range rapid.IntRange(1, 4).Draw(rt, "calls") {
			// Not SliceOfN(keys, 0, 200), whose lengths are mostly below
			// one chunk of 64.
			vs := rapid.SliceOfN(keys, rapid.IntRange(0, 200).Draw(rt, "n"), -1).Draw(rt, "payloads")
			var opts []sched.AddOption
			if rapid.Bool().Draw(rt, "priority") {
				opts = append(opts, sched.WithPriority(rapid.IntRange(sched.MinPriority, 9).Draw(rt, "p")))
			}
			if rapid.Bool().Draw(rt, "delayed") {
				opts = append(opts, sched.At(time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)))
			}
			var want []sched.Result
			for _, v := range vs {
				id, added, err := model.Add(ctx, v, opts...)
				if err != nil {
					rt.Fatalf("Add: %v", err)
				}
				want = append(want, sched.Result{ID: id, Added: added})
			}
			before := w.adds
			for _, q := range []*sched.Queue[int, int]{real, embed} {
				got, err := q.AddAll(ctx, vs, opts...)
				if err != nil {
					rt.Fatalf("%s: AddAll: %v", q.Name(), err)
				}
				// IDs are per backend, from 1 in each: equal if the same adds were made.
				if !slices.Equal(got, want) && len(got)+len(want) > 0 {
					rt.Fatalf("%s: AddAll(%v) = %v, want %v", q.Name(), vs, got, want)
				}
			}
			if w.adds-before != len(vs) {
				rt.Fatalf("AddAll on a backend that embeds Memory called its Add %d times for %d payloads", w.adds-before, len(vs))
			}
		}
		want, wantCounts := entries(t, s, "model"), must.Counts(t, model)
		for _, q := range []*sched.Queue[int, int]{real, embed} {
			if got := entries(t, s, q.Name()); !slices.Equal(got, want) {
				rt.Fatalf("%s: entries %v, want %v", q.Name(), got, want)
			}
			if got := must.Counts(t, q); got != wantCounts {
				rt.Fatalf("%s: counts %+v, want %+v", q.Name(), got, wantCounts)
			}
		}
	})
}

// An invalid payload midway (a NaN key, a Key function that panics) ends
// AddAll there: the payloads before it are added, also in its chunk of 64,
// and their results returned with the error; none after it is.
func TestAddAllStopsAtAnInvalidPayload(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := must.New(t, sched.Config{Workers: 1})
	q := must.Queue(t, s, "nan", sched.QueueConfig[float64, float64]{Handler: func(context.Context, *sched.Job[float64, float64]) error { return nil }})
	vs := make([]float64, 150)
	for i := range vs {
		vs[i] = float64(i)
	}
	vs[70] = math.NaN()
	out, err := q.AddAll(ctx, vs)
	if !errors.Is(err, sched.ErrInvalid) || len(out) != 70 {
		t.Errorf("AddAll with a NaN at 70 = %d results, %v; want 70 and ErrInvalid", len(out), err)
	}
	if c := must.Counts(t, q); c.Added != 70 {
		t.Errorf("%d added, want 70", c.Added)
	}

	p := must.Queue(t, s, "panics", sched.QueueConfig[int, int]{
		Handler: func(context.Context, *sched.Job[int, int]) error { return nil },
		Key: func(v int) int {
			if v == 100 {
				panic("no key")
			}
			return v
		},
	})
	ints := make([]int, 150)
	for i := range ints {
		ints[i] = i
	}
	out, err = p.AddAll(ctx, ints)
	if !errors.Is(err, sched.ErrInvalid) || len(out) != 100 {
		t.Errorf("AddAll whose Key panics at 100 = %d results, %v; want 100 and ErrInvalid", len(out), err)
	}
	if c := must.Counts(t, p); c.Added != 100 {
		t.Errorf("%d added, want 100", c.Added)
	}
}

// AddAll keeps no payload once its entries are gone: the buffers it builds
// entries in are reused, and must not hold the last chunk's payloads.
func TestAddAllKeepsNoPayload(t *testing.T) {
	ctx := context.Background()
	s := must.New(t, sched.Config{Workers: 1})
	type big struct{ b [1 << 10]byte }
	q := must.Queue(t, s, "q", sched.QueueConfig[*big, int]{
		Handler: func(context.Context, *sched.Job[*big, int]) error { return nil },
		Key:     func(p *big) int { return int(p.b[0]) },
	})
	p := &big{}
	wp := weak.Make(p)
	if _, err := q.AddAll(ctx, []*big{p}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Inspector().Delete(ctx, sched.Query{Queues: []string{"q"}}); err != nil || n != 1 {
		t.Fatalf("Delete = %d, %v", n, err)
	}
	p = nil
	runtime.GC() // once: a sync.Pool keeps what it held through one
	if wp.Value() != nil {
		t.Error("the payload of a deleted entry is still reachable after AddAll")
	}
}

// A Key function that ends its goroutine (runtime.Goexit) midway through
// AddAll leaves no payload of the chunk it was building in AddAll's pool.
func TestAddAllKeepsNoPayloadAfterGoexit(t *testing.T) {
	ctx := context.Background()
	s := must.New(t, sched.Config{Workers: 1})
	type big struct {
		n int
		_ [1 << 10]byte
	}
	q := must.Queue(t, s, "q", sched.QueueConfig[*big, int]{
		Handler: func(context.Context, *sched.Job[*big, int]) error { return nil },
		Key: func(p *big) int {
			if p.n == 3 {
				runtime.Goexit()
			}
			return p.n
		},
	})
	var wps []weak.Pointer[big]
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		ps := []*big{{n: 0}, {n: 1}, {n: 2}, {n: 3}}
		for _, p := range ps {
			wps = append(wps, weak.Make(p))
		}
		_, _ = q.AddAll(ctx, ps)
		t.Error("AddAll returned after its Key function called runtime.Goexit")
	}()
	<-ended
	runtime.GC()
	for i, wp := range wps {
		if wp.Value() != nil {
			t.Errorf("payload %d is still reachable after AddAll's goroutine ended", i)
		}
	}
	if c := must.Counts(t, q); c.Added != 0 {
		t.Errorf("%d added, want 0: the chunk is added once built", c.Added)
	}
}

// A Key function may call Add and AddAll of its own queue while AddAll
// builds a chunk: no lock is held then, and each call has its own buffer.
func TestAddAllReentrantFromKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := must.New(t, sched.Config{Workers: 1})
	var q *sched.Queue[int, int]
	q = must.Queue(t, s, "q", sched.QueueConfig[int, int]{
		Handler: func(context.Context, *sched.Job[int, int]) error { return nil },
		Key: func(v int) int {
			if v == 5 {
				if _, _, err := q.Add(ctx, 1000); err != nil {
					t.Error(err)
				}
				if out, err := q.AddAll(ctx, []int{1001, 1002, 6}); err != nil || len(out) != 3 {
					t.Errorf("nested AddAll = %v, %v", out, err)
				}
			}
			return v
		},
	})
	out, err := q.AddAll(ctx, []int{1, 5, 6, 7})
	if err != nil {
		t.Fatal(err)
	}
	// 6 was added by the nested AddAll, before this chunk was: a duplicate.
	want := []bool{true, true, false, true}
	for i, r := range out {
		if r.Added != want[i] {
			t.Errorf("result %d = %+v, want added %v", i, r, want[i])
		}
	}
	if c := must.Counts(t, q); c.Added != 7 {
		t.Errorf("%d added, want 7 (1, 5, 7 and the nested 1000, 1001, 1002, 6)", c.Added)
	}
}

// A Stop that returns while AddAll builds a chunk (here, from its Key
// function) leaves the chunk unadded: nothing lands after Stop returned.
func TestAddAllAddsNothingAfterStopReturned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := must.New(t, sched.Config{Workers: 1})
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Handler: func(context.Context, *sched.Job[int, int]) error { return nil },
			Key: func(v int) int {
				if v == 2 {
					if err := s.Stop(ctx); err != nil {
						t.Error(err)
					}
				}
				return v
			},
		})
		out, err := q.AddAll(ctx, []int{1, 2, 3}, sched.After(time.Hour))
		if !errors.Is(err, sched.ErrStopped) {
			t.Errorf("AddAll across a Stop: %v, want ErrStopped", err)
		}
		if c := must.Counts(t, q); c.Added != 0 || len(out) != 0 {
			t.Errorf("%d entries added and %d results after the Stop in the Key function returned, want none", c.Added, len(out))
		}
	})
}
