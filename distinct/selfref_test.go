package distinct_test

import (
	"errors"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/jobkit/jobkit/distinct"
	"github.com/jobkit/jobkit/internal/testkit"
)

// An unhashable key that refers to itself (a []any holding itself) is
// refused like any other unhashable key. Before, Add formatted it with %#v
// for the error message (keys.Describe), and fmt has no cycle detection:
// the goroutine overflowed its stack, a fatal error that no recover
// catches. The test runs the Add in a child process, whose stack limit is
// lowered from 1 GB to 64 MB only so that a crash comes fast.
func TestASelfReferentialKeyIsRefused(t *testing.T) {
	if !testkit.InChild(t) {
		return
	}
	debug.SetMaxStack(64 << 20)
	q, _ := distinct.New[any](distinct.Config{})
	s := make([]any, 1)
	s[0] = s
	if q.Add(s) {
		t.Error("Add of a self-referential []any = true")
	}
	if _, err := q.TryAdd(s); !errors.Is(err, distinct.ErrInvalid) {
		t.Errorf("TryAdd of a self-referential []any = %v, want ErrInvalid", err)
	}
}

// A refused key costs O(1), not O(its size): its error message names its
// type. Before, it was formatted whole and then cut to 64 bytes: refusing
// an unhashable key of 8 MB allocated about 280 MB.
func TestARefusedKeyIsNotFormattedWhole(t *testing.T) {
	q, _ := distinct.New[any](distinct.Config{})
	big := make([]byte, 8<<20)
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	if q.Add(big) {
		t.Fatal("Add of a []byte key = true")
	}
	runtime.ReadMemStats(&m1)
	if d := m1.TotalAlloc - m0.TotalAlloc; d > 1<<20 {
		t.Errorf("refusing one unhashable key allocated %d MB", d>>20)
	}
}
