package governor_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jobkit/jobkit/governor"
)

// TestPermitStaleCopies keeps copies of released Permits and releases them
// again after their records were handed out anew, with few and with many
// Permits held at once: a stale copy must never release a later grant.
func TestPermitStaleCopies(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2, 7, 300} {
		g, err := governor.New(governor.Config{Slots: 1000, Sampler: &fakeSampler{}})
		if err != nil {
			t.Fatal(err)
		}
		var stale []governor.Permit
		for round := range 5 {
			var live []governor.Permit
			for range n {
				p, ok := g.TryAcquire("", governor.Weight{})
				if !ok {
					t.Fatal("TryAcquire refused")
				}
				live = append(live, p)
			}
			for _, p := range stale {
				p.Release()
			}
			if s := g.Snapshot(); s.SlotsInUse != n {
				t.Fatalf("%d held, round %d: SlotsInUse after releasing stale copies = %d", n, round, s.SlotsInUse)
			}
			for _, p := range live {
				c := p
				p.Release()
				c.Release()
			}
			stale = append(stale, live...)
			if s := g.Snapshot(); s.SlotsInUse != 0 {
				t.Fatalf("%d held, round %d: SlotsInUse after releasing all = %d", n, round, s.SlotsInUse)
			}
		}
	}
}

// TestPermitCopiesConcurrent grants Permits on some goroutines and releases
// copies of them, twice each, on others, while stale copies of earlier grants
// are released again: no more slots may ever be held than there are.
func TestPermitCopiesConcurrent(t *testing.T) {
	t.Parallel()
	const slots, grantors, rounds = 3, 4, 2000
	g, err := governor.New(governor.Config{Slots: slots, Sampler: &fakeSampler{}})
	if err != nil {
		t.Fatal(err)
	}
	var held atomic.Int64
	type grant struct {
		p governor.Permit
		n int64
	}
	handoff := make(chan grant)
	var releasers sync.WaitGroup
	for range 3 {
		releasers.Go(func() {
			var old []governor.Permit
			for gr := range handoff {
				held.Add(-gr.n)
				c := gr.p
				gr.p.Release()
				c.Release()
				for _, p := range old {
					p.Release() // stale: no effect
				}
				old = append(old[:0], gr.p, c)
			}
		})
	}
	var grantorsWG sync.WaitGroup
	for w := range grantors {
		grantorsWG.Go(func() {
			for i := range rounds {
				n := int64(1 + (w+i)%2)
				if p, ok := g.TryAcquire("", governor.Weight{Slots: int(n)}); ok {
					if h := held.Add(n); h > slots {
						t.Errorf("%d slots held of %d", h, slots)
					}
					if i%3 == 0 { // released here, and again by a releaser
						held.Add(-n)
						p.Release()
						n = 0
					}
					handoff <- grant{p, n}
				}
			}
		})
	}
	grantorsWG.Wait()
	close(handoff)
	releasers.Wait()
	if s := g.Snapshot(); s.SlotsInUse != 0 {
		t.Errorf("SlotsInUse at the end = %d, want 0", s.SlotsInUse)
	}
	if p, ok := g.TryAcquire("", governor.Weight{Slots: slots}); !ok {
		t.Error("TryAcquire of every slot at the end refused")
	} else {
		p.Release()
	}
}

// inGoroutine runs f on a new goroutine and waits for it.
func inGoroutine(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
}

// TestReleasedSlotsAreFree releases one-slot Permits on many goroutines
// (whose records may keep the slots for their next grant), then checks that
// every slot is free to anyone: a TryAcquire on another goroutine, one of a
// Weight of all slots, an Acquire, and Snapshot.
func TestReleasedSlotsAreFree(t *testing.T) {
	t.Parallel()
	const slots = 5
	g, err := governor.New(governor.Config{Slots: slots, Sampler: &fakeSampler{}})
	if err != nil {
		t.Fatal(err)
	}
	cycle := func() {
		for range 8 {
			inGoroutine(func() {
				for range 3 {
					p, ok := g.TryAcquire("", governor.Weight{})
					if !ok {
						t.Error("TryAcquire refused with every slot free")
					}
					p.Release()
				}
			})
		}
	}
	cycle()
	if s := g.Snapshot(); s.SlotsInUse != 0 {
		t.Errorf("SlotsInUse = %d, want 0", s.SlotsInUse)
	}
	var held []governor.Permit
	for i := range slots {
		p, ok := g.TryAcquire("", governor.Weight{})
		if !ok {
			t.Fatalf("TryAcquire %d of %d refused", i+1, slots)
		}
		held = append(held, p)
	}
	if tryAcquire(g) {
		t.Error("TryAcquire beyond the slots admitted")
	}
	for _, p := range held {
		inGoroutine(p.Release)
	}
	cycle()
	p, ok := g.TryAcquire("", governor.Weight{Slots: slots})
	if !ok {
		t.Fatal("TryAcquire of all slots refused")
	}
	p.Release()
	cycle()
	p, err = g.Acquire(t.Context(), "key", governor.Weight{Slots: slots})
	if err != nil {
		t.Fatal(err)
	}
	p.Release()
	cycle()
	for i := range slots {
		p, err := g.Acquire(t.Context(), "", governor.Weight{})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Release()
		if s := g.Snapshot(); s.SlotsInUse != i+1 {
			t.Errorf("SlotsInUse = %d, want %d", s.SlotsInUse, i+1)
		}
	}
}

// TestReleaseToWaiter checks that a one-slot Permit released while an
// Acquire waits serves the waiter, whichever goroutine releases it.
func TestReleaseToWaiter(t *testing.T) {
	t.Parallel()
	g, err := governor.New(governor.Config{Slots: 1, Sampler: &fakeSampler{}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		p, ok := g.TryAcquire("", governor.Weight{})
		if !ok {
			t.Fatalf("round %d: TryAcquire refused", i)
		}
		c := acquireAsync(t.Context(), g, governor.Weight{})
		if i%2 == 0 {
			inGoroutine(p.Release)
		} else {
			p.Release()
		}
		r := <-c
		if r.err != nil {
			t.Fatal(r.err)
		}
		inGoroutine(r.p.Release)
	}
}
