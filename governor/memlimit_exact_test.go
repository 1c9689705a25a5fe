package governor_test

import (
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/jobkit/jobkit/governor"
)

// Memory use exactly at MaxMemoryPercent is not above it, so it is admitted
// however the ratio rounds in floating point (11/20·100 is
// 55.00000000000001 in float64), and one byte more is refused.
func TestMemoryExactlyAtTheLimitIsAdmitted(t *testing.T) {
	t.Parallel()
	at := func(used, limit uint64) governor.Reading {
		return governor.Reading{CPUCores: 1, MemoryUsed: used, MemoryAvailable: limit - used, MemoryLimit: limit}
	}
	for _, c := range []struct {
		used, limit uint64
		pct         float64
	}{{11, 20, 55}, {7, 25, 28}, {7, 50, 14}, {11 << 30, 20 << 30, 55}} {
		t.Run(fmt.Sprint(c.used, "/", c.limit), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g, f := setup(t, governor.Config{MaxCPUPercent: 100, MaxMemoryPercent: c.pct, Hysteresis: -1}, at(c.used, c.limit))
				if !tryAcquire(g) {
					t.Errorf("memory %d of %d (%v%%) refused under MaxMemoryPercent %v", c.used, c.limit, at(c.used, c.limit).MemoryPercent(), c.pct)
				}
				sample(f, at(c.used+1, c.limit), nil)
				if tryAcquire(g) {
					t.Errorf("memory %d of %d admitted under MaxMemoryPercent %v", c.used+1, c.limit, c.pct)
				}
			})
		})
	}
}
