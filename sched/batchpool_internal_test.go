package sched

import (
	"runtime"
	"testing"
)

// The pool keeps up to max batches, across garbage collections, and hands
// them out again before it makes new ones.
func TestBatchPoolKeepsBatchesAcrossGC(t *testing.T) {
	q := &Queue[int, int]{}
	p := &batchPool[int, int]{max: 3}
	kept := map[*batch[int, int]]bool{}
	var bs []*batch[int, int]
	for range 4 {
		bs = append(bs, p.get(q))
	}
	for _, b := range bs {
		p.put(b)
	}
	for _, b := range bs[:3] {
		kept[b] = true
	}
	runtime.GC()
	runtime.GC()
	for i := range 3 {
		if b := p.get(q); !kept[b] {
			t.Fatalf("get %d after two collections returned a batch the pool did not keep", i)
		}
	}
	if b := p.get(q); kept[b] || b == bs[3] || b.q != q || !b.finished || b.liveAt != -1 {
		t.Errorf("the pool kept more than max batches, or made a new one wrong: %+v", b)
	}
}

// Whatever the batch size, the free batches of a queue keep room for at
// most maxKeptClaims claims.
func TestBatchPoolBoundsTheRoomItKeeps(t *testing.T) {
	q := &Queue[int, int]{}
	p := &batchPool[int, int]{max: 64}
	var bs []*batch[int, int]
	for range 64 {
		b := p.get(q)
		b.claims = make([]Claim[int, int], 0, 1024)
		bs = append(bs, b)
	}
	for _, b := range bs {
		p.put(b)
	}
	if n, want := len(p.free), maxKeptClaims/1024; n != want {
		t.Errorf("%d batches of room for 1,024 claims kept, want %d", n, want)
	}
	if p.claims != len(p.free)*1024 {
		t.Errorf("room for %d claims counted, %d kept", p.claims, len(p.free)*1024)
	}
	for range len(p.free) {
		p.get(q)
	}
	if p.claims != 0 {
		t.Errorf("room for %d claims counted in an empty pool", p.claims)
	}
}
