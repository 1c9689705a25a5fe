package sched

import "testing"

// A steady load whose stored entries swing between a few and a few
// thousand reuses the order's slots: no allocation once it has grown.
func TestOrderKeepsItsSlotsUnderASteadyLoad(t *testing.T) {
	var o order[int, int]
	es := make([]mentry[int, int], 8192)
	var id ID
	cycle := func() {
		for i := range es {
			id++
			es[i].id = id
			o.push(&es[i])
		}
		for i := range es[:len(es)-100] {
			o.remove(&es[i]) // compacts, to far less than a quarter
		}
		for i := range es[len(es)-100:] {
			o.remove(&es[len(es)-100+i])
		}
	}
	cycle()
	cycle()
	if allocs := testing.AllocsPerRun(20, cycle); allocs != 0 {
		t.Errorf("%v allocations a cycle of %d entries, want 0", allocs, len(es))
	}
}
