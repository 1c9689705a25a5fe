package bench

import (
	"fmt"
	"os"
	"runtime"
	"testing"
)

// small reports whether the benchmarks run in their quick form, with large
// preloads scaled down: under -short or with JOBKIT_BENCH_SMALL=1. CI runs
// every benchmark once that way so that none of them rots; run.sh measures
// the real sizes.
func small() bool {
	return testing.Short() || os.Getenv("JOBKIT_BENCH_SMALL") == "1"
}

// sized returns full, or quick in the quick form.
func sized(full, quick int) int {
	if small() {
		return quick
	}
	return full
}

// mallocs returns the number of heap allocations so far.
func mallocs() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.Mallocs
}

// heapAfterGC returns the live heap after a full collection.
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// forEachImpl runs body as sub-benchmark impl=<name> for each named
// implementation, with integer keys.
func forEachImpl(b *testing.B, names []string, body func(b *testing.B, f Factory[int])) {
	for _, name := range names {
		f, ok := Lookup[int](name)
		if !ok {
			b.Fatalf("no implementation %q", name)
		}
		b.Run("impl="+name, func(b *testing.B) { body(b, f) })
	}
}

// allImpls names every implementation of Factories, jobkit first.
var allImpls = implNames()

func implNames() []string {
	var names []string
	for _, f := range Factories[int]() {
		names = append(names, f.Name)
	}
	return names
}

func name(format string, args ...any) string { return fmt.Sprintf(format, args...) }
