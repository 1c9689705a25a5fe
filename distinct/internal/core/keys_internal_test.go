package core

import (
	"fmt"
	"math"
	"testing"
)

// slotBound is the most slots a table of n entries may have, whatever the
// keys: maxSpread times what n entries need (placement by value may spread
// that far before it mixes), and never below the smallest table.
func slotBound(n int) int { return max(maxSpread*needed(n), minTable) }

// checkBound adds the keys to a queue and checks that neither table grew
// past slotBound, with the keys queued and with them all in progress.
func checkBound[T comparable](t *testing.T, name string, keys []T) {
	t.Helper()
	var q Queue[T]
	n := 0
	for _, k := range keys {
		if q.Add(k) {
			n++
		}
	}
	if got := len(q.items.slots); got > slotBound(n) {
		t.Errorf("%s: %d keys queued in %d slots, bound %d", name, n, got, slotBound(n))
	}
	q.lock()
	b := q.takeLocked(n, nil)
	q.mu.Unlock()
	if got := len(q.items.slots); got > slotBound(n) {
		t.Errorf("%s: %d keys in progress in %d slots, bound %d", name, n, got, slotBound(n))
	}
	q.lock()
	q.settleAllLocked(b, complete)
	q.mu.Unlock()
}

// TestNoKeySetGrowsATableFasterThanItsItems tries key sets built to cluster:
// strides of every power of two, keys that share their low or high bits,
// mixtures of integer types in an interface, for each kind of key type.
func TestNoKeySetGrowsATableFasterThanItsItems(t *testing.T) {
	t.Parallel()
	const n = 1024
	type JobID int64
	type small uint16
	for shift := range 64 {
		ints := make([]int, n)
		ids := make([]JobID, n)
		anys := make([]any, 0, 2*n)
		u32 := make([]uint32, n)
		for i := range n {
			k := i << shift
			ints[i], ids[i] = k, JobID(k)
			anys = append(anys, k, int64(k))
			u32[i] = uint32(i) << min(shift, 31)
		}
		checkBound(t, fmt.Sprintf("int i<<%d", shift), ints)
		checkBound(t, fmt.Sprintf("JobID i<<%d", shift), ids)
		checkBound(t, fmt.Sprintf("any int and int64 i<<%d", shift), anys)
		checkBound(t, fmt.Sprintf("uint32 i<<%d", min(shift, 31)), u32)
	}
	// High bits only, low bits only, two dense blocks far apart, negatives.
	var high, low, blocks, neg []int
	for i := range n {
		high = append(high, int(uint64(i)<<52))
		low = append(low, i%64+(i/64)<<40)
		blocks = append(blocks, i%2*(1<<62)+i/2)
		neg = append(neg, -i*1024)
	}
	checkBound(t, "high bits", high)
	checkBound(t, "low bits with a stride", low)
	checkBound(t, "two blocks", blocks)
	checkBound(t, "negatives", neg)
	var smalls []small
	for i := range math.MaxUint16 + 1 {
		smalls = append(smalls, small(i))
	}
	checkBound(t, "every uint16", smalls)
	var floats []float64
	var strs []string
	for i := range n {
		floats = append(floats, math.Float64frombits(uint64(i)<<52))
		strs = append(strs, fmt.Sprintf("default/pod-%d", i))
	}
	checkBound(t, "floats differing in the exponent", floats)
	checkBound(t, "strings", strs)
}
