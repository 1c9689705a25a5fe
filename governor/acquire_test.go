package governor_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/governor"
)

// acquireAsync calls Acquire in a new goroutine and returns a channel that
// receives its result.
func acquireAsync(ctx context.Context, g *governor.Governor, w governor.Weight) <-chan result {
	c := make(chan result, 1)
	go func() {
		p, err := g.Acquire(ctx, "", w)
		c <- result{p, err}
	}()
	return c
}

type result struct {
	p   governor.Permit
	err error
}

// blocked reports whether nothing has been received on c yet. Call it after synctest.Wait.
func blocked(c <-chan result) bool { return len(c) == 0 }

func TestAcquireWokenBySample(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g, f := setup(t, governor.Config{}, reading(95, 100))
		c := acquireAsync(t.Context(), g, governor.Weight{})
		sample(f, reading(75, 100), nil) // below the limit, not below the low watermark
		if !blocked(c) {
			t.Fatal("Acquire returned while the CPU was over the low watermark")
		}
		sample(f, reading(50, 100), nil)
		r := <-c
		if r.err != nil {
			t.Fatal(r.err)
		}
		r.p.Release()
	})
}

func TestAcquireWokenByRelease(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g, _ := setup(t, governor.Config{Slots: 1}, reading(10, 100))
		held, _ := g.TryAcquire("", governor.Weight{})
		c := acquireAsync(t.Context(), g, governor.Weight{})
		synctest.Wait()
		if !blocked(c) {
			t.Fatal("Acquire returned with no slot free")
		}
		held.Release()
		r := <-c
		if r.err != nil {
			t.Fatal(r.err)
		}
		if s := g.Snapshot(); s.SlotsInUse != 1 || s.Waiting != 0 {
			t.Errorf("Snapshot = %v, want 1 slot in use, none waiting", s)
		}
		r.p.Release()
	})
}

func TestAcquireCancelled(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g, _ := setup(t, governor.Config{Slots: 1}, reading(10, 100))
		held, _ := g.TryAcquire("", governor.Weight{})
		ctx, cancel := context.WithCancel(t.Context())
		c := acquireAsync(ctx, g, governor.Weight{})
		synctest.Wait()
		cancel()
		if r := <-c; !errors.Is(r.err, context.Canceled) {
			t.Fatalf("cancelled Acquire = %v, want Canceled", r.err)
		}
		if s := g.Snapshot(); s.SlotsInUse != 1 || s.Waiting != 0 {
			t.Errorf("Snapshot after cancel = %v, want 1 slot in use, none waiting", s)
		}
		held.Release()
		if !tryAcquire(g) {
			t.Error("TryAcquire after the cancelled waiter left failed")
		}
		if _, err := g.Acquire(ctx, "", governor.Weight{}); !errors.Is(err, context.Canceled) {
			t.Errorf("Acquire with a done context = %v, want Canceled (even with a slot free)", err)
		}
	})
}

// TestAcquireCancelRacingGrant cancels a waiter at the same instant it is
// granted: whichever wins, nothing stays held and the grant is not lost.
func TestAcquireCancelRacingGrant(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g, _ := setup(t, governor.Config{Slots: 1}, reading(10, 100))
		outcomes := map[bool]int{}
		for i := range 200 {
			held, _ := g.TryAcquire("", governor.Weight{})
			ctx, cancel := context.WithCancel(t.Context())
			first := acquireAsync(ctx, g, governor.Weight{})
			synctest.Wait()
			second := acquireAsync(t.Context(), g, governor.Weight{})
			synctest.Wait()
			if i%2 == 0 { // first is woken by its context, then finds itself granted
				cancel()
				held.Release()
			} else { // first is woken by the grant, then its context is done
				held.Release()
				cancel()
			}
			r := <-first
			outcomes[r.err == nil] = outcomes[r.err == nil] + 1
			r.p.Release()
			r = <-second // served either way
			if r.err != nil {
				t.Fatal(r.err)
			}
			r.p.Release()
			if s := g.Snapshot(); s.SlotsInUse != 0 || s.Waiting != 0 {
				t.Fatalf("Snapshot = %v, want nothing held", s)
			}
		}
		t.Logf("granted %d, cancelled %d", outcomes[true], outcomes[false])
	})
}

func TestAcquireFIFO(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g, _ := setup(t, governor.Config{Slots: 2}, reading(10, 100))
		held, _ := g.TryAcquire("", governor.Weight{Slots: 2})
		weights := []int{1, 2, 1, 1}
		var cs []<-chan result
		for _, n := range weights {
			cs = append(cs, acquireAsync(t.Context(), g, governor.Weight{Slots: n}))
			synctest.Wait() // each is queued before the next arrives
		}
		if tryAcquire(g) {
			t.Fatal("TryAcquire overtook the waiters")
		}
		held.Release()
		// The first waiter takes one slot; the second needs two and holds up the rest.
		r0 := <-cs[0]
		synctest.Wait()
		for i := 1; i < len(cs); i++ {
			if !blocked(cs[i]) {
				t.Fatalf("waiter %d was served before waiter 1", i)
			}
		}
		if tryAcquire(g) {
			t.Fatal("TryAcquire overtook the waiters with a slot free")
		}
		r0.p.Release()
		r1 := <-cs[1]
		synctest.Wait()
		if !blocked(cs[2]) || !blocked(cs[3]) {
			t.Fatal("waiters 2 and 3 were served while waiter 1 held both slots")
		}
		r1.p.Release()
		r2, r3 := <-cs[2], <-cs[3]
		for _, r := range []result{r0, r1, r2, r3} {
			if r.err != nil {
				t.Error(r.err)
			}
		}
		r2.p.Release()
		r3.p.Release()
	})
}

func TestAcquireWaitsForRoom(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// Room: 90% of 1000 - 500 = 400 bytes.
		g, f := setup(t, governor.Config{Slots: 4}, reading(10, 500))
		c := acquireAsync(t.Context(), g, governor.Weight{Memory: 500})
		sample(f, reading(10, 450), nil) // 450 bytes of room: not yet
		if !blocked(c) {
			t.Fatal("Acquire of 500 bytes returned with 450 of room")
		}
		if tryAcquire(g) {
			t.Fatal("TryAcquire overtook a waiter blocked on memory")
		}
		sample(f, reading(10, 300), nil)
		r := <-c
		if r.err != nil {
			t.Fatal(r.err)
		}
		r.p.Release()
	})
}

// TestConcurrent hammers a Governor with grants, releases, cancellations and
// samples from many goroutines, checking that no more slots are ever held
// than there are and that nothing is held at the end.
func TestConcurrent(t *testing.T) {
	t.Parallel()
	const slots, workers, rounds = 3, 8, 300
	f := &fakeSampler{r: reading(10, 100)}
	g, err := governor.New(governor.Config{Slots: slots, Sampler: f, Interval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	var held atomic.Int64
	hold := func(p governor.Permit, n int64) {
		if h := held.Add(n); h > slots {
			t.Errorf("%d slots held of %d", h, slots)
		}
		held.Add(-n)
		p.Release()
		p.Release()
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				n := int64(1 + (w+i)%2)
				switch i % 4 {
				case 0:
					if p, ok := g.TryAcquire("try", governor.Weight{Slots: int(n)}); ok {
						hold(p, n)
					}
				case 1:
					f.set(reading(float64((w*i)%100), 100), nil)
					fallthrough
				default:
					ctx, cancel := context.WithTimeout(t.Context(), time.Duration(i%3)*time.Microsecond)
					p, err := g.Acquire(ctx, "wait", governor.Weight{Slots: int(n)})
					cancel()
					if err == nil {
						hold(p, n)
					}
				}
			}
		})
	}
	wg.Wait()
	if err := g.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	if s := g.Snapshot(); s.SlotsInUse != 0 || s.Waiting != 0 {
		t.Errorf("Snapshot at the end = %v, want nothing held", s)
	}
}
