package governor_test

import (
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/governor"
)

// A key that holds math.MaxInt32 slots for a minute, twice, is charged the
// longest Duration: a saturated sum plus more stays saturated. (Review:
// kills sat.Add adding without saturation; TestUsageSaturates holds once,
// so that no sum is added to a saturated one.)
func TestUsageStaysSaturated(t *testing.T) {
	t.Parallel()
	for _, window := range []time.Duration{forever, time.Hour} {
		t.Run(window.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g, _ := setup(t, governor.Config{UsageWindow: window, Slots: math.MaxInt32}, reading(10, 100))
				for range 2 {
					p, ok := g.TryAcquire("k", governor.Weight{Slots: math.MaxInt32})
					if !ok {
						t.Fatal("TryAcquire refused")
					}
					time.Sleep(time.Minute)
					p.Release()
				}
				if got := g.Usage("k"); got != forever {
					t.Errorf("Usage %v after two minutes of math.MaxInt32 slots, want %v", got, forever)
				}
			})
		})
	}
}

// Under a memory limit and room between 2⁶³ and 2⁶⁴ bytes, a Weight of
// math.MaxInt64 bytes is valid and fits. (From mutation testing: kills sat.FromFloat leaving
// floats from 2⁶³ to 2⁶⁴ to the undefined conversion, which gives
// math.MinInt64 on amd64; TestMemoryWeightsAtTheEndOfTheRange uses
// math.MaxUint64, which is 2⁶⁴ as a float.)
func TestMemoryRoomBetween2To63And2To64(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const limit = 3 << 62
		r := governor.Reading{CPUCores: 2, MemoryLimit: limit, MemoryAvailable: limit}
		g, _ := setup(t, governor.Config{MaxMemoryPercent: 100}, r)
		p, ok := g.TryAcquire("", governor.Weight{Memory: math.MaxInt64})
		if !ok {
			t.Errorf("TryAcquire of math.MaxInt64 bytes refused under a limit and room of %d: %v", uint64(limit), g.Snapshot())
		}
		p.Release()
	})
}
