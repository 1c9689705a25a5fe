package governor_test

import (
	"errors"
	"math"
	"testing"
	"testing/synctest"

	"github.com/jobkit/jobkit/governor"
)

// TestLimitOffMeansOff checks that a limit set to 100% ("off") neither
// refuses work nor bounds the CPU of a Weight, whatever the reading.
func TestLimitOffMeansOff(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g, f := setup(t, governor.Config{Slots: 10, MaxCPUPercent: 100, MaxMemoryPercent: 100}, reading(99, 100))
		for _, w := range []governor.Weight{{CPUPercent: 5}, {CPUPercent: 50}, {CPUPercent: 100}} {
			if p, ok := g.TryAcquire("", w); !ok {
				t.Errorf("CPU limit off, 99%% CPU: TryAcquire(%+v) refused", w)
			} else {
				p.Release()
			}
		}
		sample(f, reading(100, 100), nil)
		if p, ok := g.TryAcquire("", governor.Weight{CPUPercent: 100}); !ok {
			t.Error("CPU limit off, 100% CPU: TryAcquire of 100 CPU points refused")
		} else {
			p.Release()
		}
		// Memory over its limit (a working set above a cgroup's limit): the
		// percentage limit is off, so work is admitted; a Weight's memory is
		// still bounded by the memory available.
		over := governor.Reading{CPUPercent: 10, MemoryUsed: 1200, MemoryAvailable: 100, MemoryLimit: 1000}
		sample(f, over, nil)
		if !tryAcquire(g) {
			t.Errorf("memory limit off, 120%% used: TryAcquire refused; %v", g.Snapshot())
		}
		if p, ok := g.TryAcquire("", governor.Weight{Memory: 100}); !ok {
			t.Error("memory limit off: TryAcquire of the 100 bytes available refused")
		} else {
			p.Release()
		}
		if _, ok := g.TryAcquire("", governor.Weight{Memory: 1}); ok {
			t.Error("TryAcquire of more memory than is available (all reserved) admitted")
		}
	})
}

// TestInvalidReading checks that a reading with a CPU figure that is not a
// number, infinite or out of range is a failed sample: the last good reading
// is kept and marked stale, and the stale policy applies.
func TestInvalidReading(t *testing.T) {
	t.Parallel()
	bad := map[string]governor.Reading{
		"cpu NaN":        {CPUPercent: math.NaN()},
		"cpu +Inf":       {CPUPercent: math.Inf(1)},
		"cpu -Inf":       {CPUPercent: math.Inf(-1)},
		"cpu negative":   {CPUPercent: -1},
		"cpu over 100":   {CPUPercent: 100.5},
		"cores NaN":      {CPUPercent: 10, CPUCores: math.NaN()},
		"cores +Inf":     {CPUPercent: 10, CPUCores: math.Inf(1)},
		"cores negative": {CPUPercent: 10, CPUCores: -2},
	}
	for name, r := range bad {
		for _, policy := range []governor.StalePolicy{governor.StaleAdmit, governor.StaleRefuse} {
			t.Run(name+"/"+policy.String(), func(t *testing.T) {
				t.Parallel()
				synctest.Test(t, func(t *testing.T) {
					g, f := setup(t, governor.Config{StalePolicy: policy}, reading(90, 100))
					sample(f, r, nil)
					s := g.Snapshot()
					if !s.Stale || !errors.Is(s.Err, governor.ErrInvalidReading) || s.CPUPercent != 90 {
						t.Errorf("Snapshot after a reading of %+v = %+v; want stale, ErrInvalidReading, the last good reading", r, s)
					}
					if got, want := tryAcquire(g), policy == governor.StaleAdmit; got != want {
						t.Errorf("TryAcquire = %v, want %v", got, want)
					}
				})
			})
		}
	}
	t.Run("first sample", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			g, _ := setup(t, governor.Config{StalePolicy: governor.StaleRefuse}, governor.Reading{CPUPercent: math.NaN()})
			if s := g.Snapshot(); !s.Stale || !errors.Is(s.Err, governor.ErrInvalidReading) || !s.SampledAt.IsZero() {
				t.Errorf("Snapshot after a NaN first reading = %+v", s)
			}
			if tryAcquire(g) {
				t.Error("TryAcquire admitted on a NaN reading")
			}
		})
	})
}

// TestMinAvailableMemoryNotBelowLimit checks that a reading whose memory
// limit leaves nothing above MinAvailableMemory, so that the Governor could
// never admit again, is a failed sample that says why.
func TestMinAvailableMemoryNotBelowLimit(t *testing.T) {
	t.Parallel()
	for _, minAvail := range []uint64{1000, 2000, math.MaxUint64} {
		synctest.Test(t, func(t *testing.T) {
			g, _ := setup(t, governor.Config{MinAvailableMemory: minAvail}, reading(10, 100))
			s := g.Snapshot()
			if !s.Stale || !errors.Is(s.Err, governor.ErrInvalidConfig) {
				t.Errorf("MinAvailableMemory %d of a 1000-byte limit: Snapshot = %+v; want stale with ErrInvalidConfig", minAvail, s)
			}
			if !tryAcquire(g) {
				t.Errorf("MinAvailableMemory %d of a 1000-byte limit: StaleAdmit refused", minAvail)
			}
		})
	}
}

// TestMinAvailableMemoryWatermarkClamped checks that a MinAvailableMemory
// whose low watermark lies above the memory limit still lets admission
// resume once memory is freed.
func TestMinAvailableMemoryWatermarkClamped(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// Stop below 950 bytes available; 950 × 1.1 = 1045 is above the limit.
		g, f := setup(t, governor.Config{MinAvailableMemory: 950}, reading(10, 60))
		if tryAcquire(g) {
			t.Fatal("TryAcquire with 940 of 950 bytes available admitted")
		}
		sample(f, reading(10, 0), nil) // everything available
		if !tryAcquire(g) {
			t.Errorf("TryAcquire with all 1000 bytes available refused: %v", g.Snapshot())
		}
	})
}
