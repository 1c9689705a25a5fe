package bench

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// TestImplsProcessEveryItemOnce checks each adapter end to end: with several
// producers and consumers, every distinct key is processed exactly once.
// Half the consumers call Process, half run the consumer loop, Run.
func TestImplsProcessEveryItemOnce(t *testing.T) {
	for _, name := range append(slices.Clone(allImpls), "jobkit-rerun") {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f, _ := Lookup(name)
			q := f.New(Options{})
			const n, producers, consumers = 2000, 3, 5
			var (
				seen      = make([]atomic.Int32, n)
				processed atomic.Int64
				done      = make(chan struct{})
				wg        sync.WaitGroup
			)
			count := func(_ context.Context, items []int) error {
				for _, x := range items {
					seen[x].Add(1)
				}
				if processed.Add(int64(len(items))) == n {
					close(done)
				}
				return nil
			}
			for c := range consumers {
				wg.Go(func() {
					k := q.Consumer()
					run := k.Run
					if c%2 == 0 {
						run = func(max int, f ProcessFunc) error { return runLoop(k.Process, max, f) }
					}
					if err := run(4, count); !errors.Is(err, ErrStopped) {
						t.Error(err)
					}
				})
			}
			for p := range producers {
				wg.Go(func() {
					for x := p; x < n; x += producers {
						q.Add(x)
					}
				})
			}
			<-done
			q.Stop()
			wg.Wait()
			for x := range seen {
				if c := seen[x].Load(); c != 1 {
					t.Fatalf("key %d processed %d times", x, c)
				}
			}
		})
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
	} {
		t.Run(tc.impl, func(t *testing.T) {
			t.Parallel()
			f, _ := Lookup(tc.impl)
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
