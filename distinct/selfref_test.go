package distinct_test

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/jobkit/jobkit/distinct"
)

// An unhashable key that refers to itself (a []any holding itself) is
// refused like any other unhashable key. Before, Add formatted it with %#v
// for the error message (keys.Describe), and fmt has no cycle detection:
// the goroutine overflowed its stack, a fatal error that no recover
// catches. The test runs the Add in a child process, whose stack limit is
// lowered from 1 GB to 64 MB only so that a crash comes fast.
func TestASelfReferentialKeyIsRefused(t *testing.T) {
	if os.Getenv("JOBKIT_SELFREF_CHILD") == "1" {
		debug.SetMaxStack(64 << 20)
		q, _ := distinct.New[any](distinct.Config{})
		s := make([]any, 1)
		s[0] = s
		if q.Add(s) {
			os.Exit(3)
		}
		_, err := q.TryAdd(s)
		if !errors.Is(err, distinct.ErrInvalid) {
			os.Exit(4)
		}
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestASelfReferentialKeyIsRefused$", "-test.count=1")
	cmd.Env = append(os.Environ(), "JOBKIT_SELFREF_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		first := string(out)
		if i := strings.Index(first, "\n\n"); i > 0 {
			first = first[:i]
		}
		t.Fatalf("Add of a self-referential []any did not return false: child %v:\n%.600s", err, first)
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
