package sched_test

import (
	"context"
	"math"
	"testing"
	"time"
	"unsafe"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/scope"
)

// keyed is a key type with a blank field, which == ignores.
type keyed struct {
	A int32
	_ int32
	B bool
}

type floaty struct {
	F float64
	N int8
}

// addTwice adds a and then b, keys equal under ==, to a fresh Memory, and
// reports whether the second add was refused as a duplicate of the first.
func addTwice[K comparable](t *testing.T, a, b K) bool {
	t.Helper()
	ctx := context.Background()
	m := sched.NewMemory[int, K]()
	if err := m.Open(sched.QueueInfo{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	id1, added1, err := m.Add(ctx, sched.NewEntry[int, K]{Key: a, Priority: 1, Now: now})
	if err != nil || !added1 {
		t.Fatalf("first add: %v %v", added1, err)
	}
	id2, added2, err := m.Add(ctx, sched.NewEntry[int, K]{Key: b, Priority: 1, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if !added2 && id2 != id1 {
		t.Fatalf("refused add returned ID %d, want the live entry's %d", id2, id1)
	}
	return !added2
}

// Keys equal under == but with different bits (+0 and −0, a blank field
// set) are one key: a live entry of one blocks an add of the other. Keys in
// an interface of different dynamic types are different keys even when
// their values print alike.
func TestMemoryKeysEqualUnderEqualityAreOneKey(t *testing.T) {
	neg := math.Copysign(0, -1)
	if !addTwice[float64](t, 0, neg) {
		t.Error("float64 keys +0 and −0: both added")
	}
	if !addTwice[float32](t, 0, float32(neg)) {
		t.Error("float32 keys +0 and −0: both added")
	}
	if !addTwice(t, floaty{F: 0, N: 1}, floaty{F: neg, N: 1}) {
		t.Error("struct keys with +0 and −0: both added")
	}
	if !addTwice[any](t, 0.0, neg) {
		t.Error("any keys +0 and −0: both added")
	}
	if !addTwice[any](t, [2]any{"x", 0.0}, [2]any{"x", neg}) {
		t.Error("any keys holding arrays with +0 and −0: both added")
	}
	if !addTwice[complex128](t, complex(0, neg), complex(neg, 0)) {
		t.Error("complex keys of signed zeros: both added")
	}
	raw := [3]int32{1, 7, 1} // A=1, the blank field 7, B=true
	blank := *(*keyed)(unsafe.Pointer(&raw))
	if blank != (keyed{A: 1, B: true}) {
		t.Fatal("== sees the blank field")
	}
	if !addTwice(t, blank, keyed{A: 1, B: true}) {
		t.Error("struct keys differing in a blank field only: both added")
	}
	if addTwice[any](t, int(1), int64(1)) {
		t.Error("any keys int(1) and int64(1), which are not equal: the second refused")
	}
	if addTwice[any](t, floaty{F: 1}, keyed{A: 1}) {
		t.Error("any keys of different struct types: the second refused")
	}
}

// A retry of a final entry is refused while a live entry holds a key equal
// to its under == (−0 for +0).
func TestMemoryRetryRefusesAKeyEqualUnderEquality(t *testing.T) {
	ctx := context.Background()
	m := sched.NewMemory[int, float64]()
	if err := m.Open(sched.QueueInfo{Name: "q", Retention: sched.DefaultRetention}); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	id, _, err := m.Add(ctx, sched.NewEntry[int, float64]{Key: 0, Priority: 1, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	sc := scope.New()
	defer sc.Close(scope.Succeeded())
	cs, err := m.Take(ctx, sc, sched.TakeRequest{Now: now, Max: 1}, nil)
	if err != nil || len(cs) != 1 {
		t.Fatalf("take: %v %v", cs, err)
	}
	if err := m.Settle(ctx, &cs[0], sched.Outcome{Kind: sched.OutcomeFailed, Finished: now}); err != nil {
		t.Fatal(err)
	}
	if _, added, err := m.Add(ctx, sched.NewEntry[int, float64]{Key: math.Copysign(0, -1), Priority: 1, Now: now}); err != nil || !added {
		t.Fatalf("add of −0 after +0 failed: %v %v", added, err)
	}
	n, err := m.Retry(ctx, sched.Filter[int, float64]{After: id - 1, Until: id}, false, now)
	if err != nil || n != 0 {
		t.Fatalf("Retry of the +0 entry while −0 is live = %d, %v; want 0", n, err)
	}
	c, _ := m.Counts(ctx)
	if c.Pending != 1 || c.Failed != 1 {
		t.Fatalf("counts %+v, want one pending and one failed", c)
	}
}
