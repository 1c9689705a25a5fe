package governor_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/jobkit/jobkit/governor"
)

// closed reports whether c is closed. Call it after synctest.Wait.
func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func TestChanged(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g, f := setup(t, governor.Config{Slots: 2}, reading(90, 100))
		c := g.Changed()
		if c2 := g.Changed(); c2 != c {
			t.Error("two calls before a change returned different channels")
		}
		synctest.Wait()
		if closed(c) {
			t.Fatal("Changed closed before any change")
		}
		sample(f, reading(10, 100), nil)
		if !closed(c) {
			t.Fatal("Changed not closed by a sample")
		}
		c = g.Changed()
		sample(f, reading(10, 100), errors.New("sampler broke"))
		if !closed(c) {
			t.Fatal("Changed not closed by a failed sample")
		}
		sample(f, reading(10, 100), nil)
		// Releases, of a one-slot Permit of the zero Weight (whose slot may
		// stay with its record) and of others.
		for _, w := range []governor.Weight{{}, {Slots: 2}, {Memory: 1}} {
			for _, key := range []string{"", "q"} {
				p, ok := g.TryAcquire(key, w)
				if !ok {
					t.Fatalf("TryAcquire(%q, %+v) refused", key, w)
				}
				c = g.Changed()
				p.Release()
				if !closed(c) {
					t.Errorf("Changed not closed by the Release of %q, %+v", key, w)
				}
				c = g.Changed()
				p.Release() // no effect, no change
				if closed(c) {
					t.Errorf("Changed closed by a second Release of %q, %+v", key, w)
				}
			}
		}
		if err := g.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !closed(c) {
			t.Error("Changed not closed by Stop")
		}
		if !closed(g.Changed()) {
			t.Error("Changed after Stop is not closed")
		}
	})
}

// TestChangedLate checks that a reading that goes stale because the Sampler
// hangs closes the channel.
func TestChangedLate(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		unblock := make(chan struct{})
		first := true
		sampler := governor.SamplerFunc(func(ctx context.Context) (governor.Reading, error) {
			if !first {
				<-unblock
			}
			first = false
			return reading(90, 100), nil
		})
		g, err := governor.New(governor.Config{Sampler: sampler, Interval: interval})
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		c := g.Changed()
		<-c // closed two intervals on, when the reading goes stale
		if s := g.Snapshot(); !s.Stale {
			t.Errorf("Snapshot = %v, want stale", s)
		}
		close(unblock)
		if err := g.Stop(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
}

// TestChangedNoLostWakeup runs a scheduling loop that waits on Changed
// whenever TryAcquire is refused, and workers that release the Permits it
// hands them: with no sampling to wake it, a lost wakeup would leave the loop
// blocked for good (synctest reports the deadlock).
func TestChangedNoLostWakeup(t *testing.T) {
	t.Parallel()
	for _, slots := range []int{1, 2, 3} {
		synctest.Test(t, func(t *testing.T) {
			g, err := governor.New(governor.Config{Slots: slots, Sampler: &fakeSampler{}}) // never started
			if err != nil {
				t.Fatal(err)
			}
			work := make(chan governor.Permit)
			var workers sync.WaitGroup
			for range 4 {
				workers.Go(func() {
					for p := range work {
						p.Release()
					}
				})
			}
			for range 2000 {
				for {
					c := g.Changed()
					if p, ok := g.TryAcquire("", governor.Weight{}); ok {
						work <- p
						break
					}
					<-c
				}
			}
			close(work)
			workers.Wait()
		})
	}
}
