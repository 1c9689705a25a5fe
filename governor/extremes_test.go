package governor_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/governor"
	"github.com/jobkit/jobkit/internal/testkit"
)

// forever is the longest time.Duration, which users write for "never" or
// "for ever".
const forever = time.Duration(math.MaxInt64)

// An Interval of centuries samples once and keeps that reading: it is not
// stale an hour on, and the Governor admits under StaleRefuse. Intervals
// above math.MaxInt64/5 make a valid Config. Before, 2·Interval, after which
// a reading is late, wrapped around to -2ns: the reading went stale as soon
// as it was applied, and StaleRefuse refused everything; and 5·Interval,
// the default MaxHold, wrapped around to a negative value (1<<61), which
// New refused.
func TestIntervalsOfCenturies(t *testing.T) {
	t.Parallel()
	for _, d := range []time.Duration{forever / 5, forever/5 + 1, 1 << 61, forever / 2, forever} {
		if _, err := governor.New(governor.Config{Interval: d, Sampler: &fakeSampler{}}); err != nil {
			t.Errorf("New with Interval %v: %v", d, err)
		}
	}
	synctest.Test(t, func(t *testing.T) {
		f := &fakeSampler{r: reading(10, 100)}
		g, err := governor.New(governor.Config{Interval: forever, Sampler: f, StalePolicy: governor.StaleRefuse})
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		defer g.Stop(context.Background())
		time.Sleep(time.Hour)
		synctest.Wait()
		if s := g.Snapshot(); s.Stale || !s.Admitting || f.count() != 1 {
			t.Errorf("an hour after Start, %d samples: %v; want one sample, fresh and admitting", f.count(), s)
		}
		p, ok := g.TryAcquire("", governor.Weight{})
		if !ok {
			t.Error("TryAcquire refused under a fresh reading")
		}
		p.Release()
	})
}

// Usage saturates at the longest Duration instead of wrapping around: a
// window of forever counts the slot-time held, and math.MaxInt32 slots held
// for a minute (over 4,000 years of one slot) are forever. Before, the
// window's span wrapped around to a negative number and no slot-time was
// counted (Usage was 0), and the sums of the buckets wrapped around to a
// negative usage.
func TestUsageSaturates(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg   governor.Config
		w     governor.Weight
		usage time.Duration
	}{
		{governor.Config{UsageWindow: forever}, governor.Weight{}, time.Minute},
		{governor.Config{UsageWindow: forever, Slots: math.MaxInt32}, governor.Weight{Slots: math.MaxInt32}, forever},
		{governor.Config{UsageWindow: time.Hour, Slots: math.MaxInt32}, governor.Weight{Slots: math.MaxInt32}, forever},
	} {
		t.Run(fmt.Sprintf("%v-%d", tc.cfg.UsageWindow, tc.w.Slots), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g, _ := setup(t, tc.cfg, reading(10, 100))
				p, ok := g.TryAcquire("k", tc.w)
				if !ok {
					t.Fatal("TryAcquire refused")
				}
				time.Sleep(time.Minute)
				p.Release()
				if got := g.Usage("k"); got != tc.usage {
					t.Errorf("window %v, %d slots: Usage %v after a minute held, want %v", tc.cfg.UsageWindow, tc.w.Slots, got, tc.usage)
				}
			})
		})
	}
}

// A NowFunc whose times lie at the end of what a Duration since the
// Governor's epoch holds (292 years on) charges a key's slot-time. Before,
// the end of the last bucket of the int64 range, (id+1)·width, wrapped
// around to a negative time, and the Release that integrated across it
// indexed the buckets with a negative number: it panicked (index out of
// range), in the caller's goroutine, holding the key's lock. The bound of
// ten seconds guards against the walk from there, a bucket at a time.
func TestUsageAtTheEndOfTheDurationRange(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var since atomic.Int64
	g, err := governor.New(governor.Config{Sampler: &fakeSampler{}, NowFunc: func() time.Time {
		return base.Add(time.Duration(since.Load()))
	}})
	if err != nil {
		t.Fatal(err)
	}
	since.Store(int64(forever - 500*time.Millisecond))
	p, ok := g.TryAcquire("k", governor.Weight{})
	if !ok {
		t.Fatal("TryAcquire refused")
	}
	since.Store(int64(forever))
	var usage time.Duration
	testkit.Within(t, "the bubble", func() {
		p.Release()
		usage = g.Usage("k")
	})
	if usage != 500*time.Millisecond {
		t.Errorf("Usage %v, want the 500ms held", usage)
	}
}

// A memory limit of math.MaxUint64 (none) leaves room for a Weight of
// math.MaxInt64 bytes, which is valid under it; under a limit that leaves
// between 2⁶² and 2⁶³ bytes, such a Weight is invalid, and Acquire says so
// at once, and a Weight of the ceiling is granted. Before, the room was
// capped at 2⁶² bytes while the most a Weight may ask for was raised to
// math.MaxInt64 from 2⁶²: none of these Weights was ever granted, and
// Acquire of the invalid one waited for ever.
func TestMemoryWeightsAtTheEndOfTheRange(t *testing.T) {
	t.Parallel()
	t.Run("none", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			none := governor.Reading{CPUCores: 2, MemoryLimit: math.MaxUint64, MemoryAvailable: math.MaxUint64}
			g, _ := setup(t, governor.Config{MaxMemoryPercent: 100}, none)
			p, ok := g.TryAcquire("", governor.Weight{Memory: math.MaxInt64})
			if !ok {
				t.Errorf("TryAcquire of math.MaxInt64 bytes refused under a limit of math.MaxUint64: %v", g.Snapshot())
			}
			p.Release()
		})
	})
	t.Run("ceiling", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			const limit = 3 << 62 // half of it is between 2⁶² and 2⁶³
			r := governor.Reading{CPUCores: 2, MemoryLimit: limit, MemoryAvailable: limit}
			g, _ := setup(t, governor.Config{MaxMemoryPercent: 50}, r)
			ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
			defer cancel()
			if _, err := g.Acquire(ctx, "", governor.Weight{Memory: math.MaxInt64}); !errors.Is(err, governor.ErrInvalidWeight) {
				t.Errorf("Acquire of math.MaxInt64 bytes under a ceiling of %d: %v, want ErrInvalidWeight", uint64(limit/2), err)
			}
			p, ok := g.TryAcquire("", governor.Weight{Memory: limit / 2})
			if !ok {
				t.Errorf("TryAcquire of the ceiling, %d bytes, refused: %v", uint64(limit/2), g.Snapshot())
			}
			p.Release()
		})
	})
}
