package bench

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// TestImplsProcessEveryItemOnce checks each adapter end to end, for every
// key kind and path: with several producers and consumers, every distinct key
// is processed exactly once. Half the consumers call Process in a loop, half
// run the consumer loop of the path, Run. Implementations without a path of
// their own (Factory.Scope false) run their one loop under both paths.
func TestImplsProcessEveryItemOnce(t *testing.T) {
	t.Parallel()
	for _, kk := range keyKinds {
		t.Run("keys="+kk.name(), kk.everyItemOnce)
	}
}

func (k *keys[K]) everyItemOnce(t *testing.T) {
	t.Parallel()
	const n, producers, consumers = 2000, 3, 5
	all := slices.Clone(k.slice(n)) // the subtests run after release
	k.release()
	index := make(map[K]int, n)
	for i, x := range all {
		index[x] = i
	}
	if len(index) != n {
		t.Fatalf("%d distinct keys of %d", len(index), n)
	}
	fs := Factories[K]()
	rerun, _ := Lookup[K]("jobkit-rerun")
	for _, f := range append(fs, rerun) {
		for _, path := range Paths {
			t.Run("impl="+f.Name+"/path="+string(path), func(t *testing.T) {
				t.Parallel()
				q := f.New(Options{})
				var (
					seen      = make([]atomic.Int32, n)
					processed atomic.Int64
					done      = make(chan struct{})
					wg        sync.WaitGroup
				)
				count := func(_ context.Context, items []K) error {
					for _, x := range items {
						i, ok := index[x]
						if !ok {
							t.Errorf("unknown key %v", x)
							continue
						}
						seen[i].Add(1)
					}
					if processed.Add(int64(len(items))) == n {
						close(done)
					}
					return nil
				}
				for c := range consumers {
					wg.Go(func() {
						con := q.Consumer()
						run := func(max int, f ProcessFunc[K]) error { return con.Run(path, max, f) }
						if c%2 == 0 {
							run = func(max int, f ProcessFunc[K]) error { return runLoop(con.Process, max, f) }
						}
						if err := run(4, count); !errors.Is(err, ErrStopped) {
							t.Error(err)
						}
					})
				}
				for p := range producers {
					wg.Go(func() {
						from, to, step := k.share(p, producers, n)
						for i := from; i < to; i += step {
							q.Add(all[i])
						}
					})
				}
				<-done
				q.Stop()
				wg.Wait()
				for i := range seen {
					if c := seen[i].Load(); c != 1 {
						t.Fatalf("key %v processed %d times", all[i], c)
					}
				}
			})
		}
	}
}

// TestRequeueOrder checks what scenario 3 counts: jobkit puts a failed batch
// back in its original position, client-go at the tail.
func TestRequeueOrder(t *testing.T) {
	for _, tc := range []struct {
		impl string
		want []int
	}{
		{"jobkit", []int{0, 1, 2, 3, 4, 5}},
		{"clientgo", []int{2, 3, 4, 5, 0, 1}},
		{"priorityqueue", []int{2, 3, 4, 5, 0, 1}},
		{"chan", []int{2, 3, 4, 5, 0, 1}},
		{"workqueue", []int{2, 3, 4, 5, 0, 1}},
	} {
		t.Run(tc.impl, func(t *testing.T) {
			t.Parallel()
			f, _ := Lookup[int](tc.impl)
			q := f.New(Options{SoleConsumer: true})
			defer q.Stop()
			for x := range 6 {
				q.Add(x)
			}
			q.Len()
			k := q.Consumer()
			first := true
			var got []int
			for len(got) < 6 {
				_ = k.Process(2, func(_ context.Context, items []int) error {
					if first {
						first = false
						return errBatch
					}
					got = append(got, items...)
					return nil
				})
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("completed %v, want %v", got, tc.want)
			}
		})
	}
}
