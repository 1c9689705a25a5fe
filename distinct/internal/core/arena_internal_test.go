package core

import "testing"

// cycle puts n flights in progress in a, then settles them all.
func (a *arena[T]) cycle(idx []uint32) {
	for i := range idx {
		idx[i] = a.alloc()
	}
	for i, j := range idx {
		a.release(j, len(idx)-1-i)
	}
}

// A load that keeps more than maxFreeCap items in progress and drains now
// and then reuses its arena: no allocation once it has grown.
func TestArenaKeepsItsSlotsUnderASteadyLoad(t *testing.T) {
	var a arena[int]
	big := make([]uint32, 4*maxFreeCap)
	small := make([]uint32, maxFreeCap/2)
	a.cycle(big)
	allocs := testing.AllocsPerRun(100, func() {
		a.cycle(big)
		a.cycle(small) // a drain that used little: not yet a reason to shrink
	})
	if allocs != 0 {
		t.Errorf("%v allocations a cycle of %d and %d flights, want 0", allocs, len(big), len(small))
	}
}

// After a burst, an arena gives its memory back once arenaPatience drains
// in a row used less than a quarter of it, and not before.
func TestArenaReleasesABurst(t *testing.T) {
	var a arena[int]
	a.cycle(make([]uint32, 100_000))
	small := make([]uint32, 10)
	for i := range arenaPatience - 1 {
		a.cycle(small)
		if cap(a.slots) < 100_000 {
			t.Fatalf("the arena let go of the burst's slots after %d small drains, want %d", i+1, arenaPatience)
		}
	}
	a.cycle(small)
	if c := cap(a.slots); c > maxFreeCap {
		t.Errorf("the arena keeps %d slots after %d small drains, want at most %d", c, arenaPatience, maxFreeCap)
	}
}
