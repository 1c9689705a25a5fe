package governor_test

import (
	"strings"
	"testing"
	"testing/synctest"

	"github.com/jobkit/jobkit/governor"
)

// TestSnapshotStringNearAUnit checks that Snapshot.String prints byte sizes
// just below a unit boundary as plain numbers below 1024 of the unit: %.3g
// printed 999.7KiB as "1e+03KiB", and the rounding of 1023.99KiB gave
// "1024KiB" where the next unit, "1MiB", was due.
func TestSnapshotStringNearAUnit(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := governor.Reading{
			CPUCores: 1, CPUSource: governor.SourceHost,
			MemoryUsed:      1023693,   // 999.7KiB
			MemoryAvailable: 1<<20 - 1, // 1023.999KiB
			MemoryLimit:     1023693 + 1<<20 - 1,
			MemorySource:    governor.SourceHost,
			GoHeap:          999<<20 + 800<<10, // 999.8MiB
		}
		g, _ := setup(t, governor.Config{MaxMemoryPercent: 100}, r)
		s := g.Snapshot().String()
		for _, want := range []string{"memory 1000KiB used, 1MiB available of 1.98MiB", "go heap 1000MiB"} {
			if !strings.Contains(s, want) {
				t.Errorf("Snapshot.String() = %q, want it to contain %q", s, want)
			}
		}
		if strings.Contains(s, "e+") {
			t.Errorf("Snapshot.String() = %q has a number in exponent form", s)
		}
	})
}
