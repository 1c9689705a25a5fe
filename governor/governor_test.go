package governor_test

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/governor"
)

func TestNewRejectsOutOfRange(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]governor.Config{
		"MaxCPUPercent negative":    {MaxCPUPercent: -1},
		"MaxCPUPercent over 100":    {MaxCPUPercent: 101},
		"MaxCPUPercent NaN":         {MaxCPUPercent: math.NaN()},
		"MaxMemoryPercent over 100": {MaxMemoryPercent: 100.5},
		"Hysteresis 1":              {Hysteresis: 1},
		"Hysteresis NaN":            {Hysteresis: math.NaN()},
		"Slots negative":            {Slots: -1},
		"Interval too short":        {Interval: time.Microsecond},
		"StalePolicy unknown":       {StalePolicy: 7},
		"UsageWindow negative":      {UsageWindow: -time.Second},
	} {
		if g, err := governor.New(cfg); !errors.Is(err, governor.ErrInvalidConfig) {
			t.Errorf("%s: New = %v, %v; want ErrInvalidConfig", name, g, err)
		}
	}
	if _, err := governor.New(governor.Config{}); err != nil {
		t.Errorf("New(Config{}) = %v", err)
	}
}

func TestAdmission(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		cfg   governor.Config
		r     governor.Reading
		admit bool
	}{
		{"idle", governor.Config{}, reading(10, 100), true},
		{"cpu at the limit", governor.Config{}, reading(80, 100), true},
		{"cpu over", governor.Config{}, reading(80.1, 100), false},
		{"cpu over a custom limit", governor.Config{MaxCPUPercent: 50}, reading(60, 100), false},
		{"cpu limit off", governor.Config{MaxCPUPercent: 100}, reading(100, 100), true},
		{"memory over", governor.Config{}, reading(10, 901), false},
		{"memory over a custom limit", governor.Config{MaxMemoryPercent: 50}, reading(10, 600), false},
		{"too little available", governor.Config{MinAvailableMemory: 300}, reading(10, 750), false},
		{"enough available", governor.Config{MinAvailableMemory: 300}, reading(10, 700), true},
		{"no memory figures", governor.Config{MinAvailableMemory: 300}, governor.Reading{CPUPercent: 10}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				g, _ := setup(t, tt.cfg, tt.r)
				if got := tryAcquire(g); got != tt.admit {
					t.Errorf("TryAcquire = %v, want %v; %v", got, tt.admit, g.Snapshot())
				}
			})
		})
	}
}

func TestSlots(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g, _ := setup(t, governor.Config{Slots: 3}, reading(10, 100))
		a, okA := g.TryAcquire("", governor.Weight{Slots: 2})
		b, okB := g.TryAcquire("", governor.Weight{})
		if !okA || !okB {
			t.Fatalf("TryAcquire of 2 then 1 of 3 slots = %v, %v", okA, okB)
		}
		if tryAcquire(g) {
			t.Fatal("TryAcquire with every slot held succeeded")
		}
		if s := g.Snapshot(); s.SlotsInUse != 3 || s.Slots != 3 {
			t.Errorf("Snapshot slots = %d/%d, want 3/3", s.SlotsInUse, s.Slots)
		}
		copyA := a
		a.Release()
		copyA.Release() // no effect: a copy of a released Permit
		a.Release()
		governor.Permit{}.Release()
		if s := g.Snapshot(); s.SlotsInUse != 1 {
			t.Errorf("SlotsInUse after releasing 2 slots twice = %d, want 1", s.SlotsInUse)
		}
		c, okC := g.TryAcquire("", governor.Weight{Slots: 2})
		if !okC {
			t.Error("TryAcquire of 2 free slots failed")
		}
		a.Release() // a's record now serves c: still no effect
		if s := g.Snapshot(); s.SlotsInUse != 3 {
			t.Errorf("SlotsInUse after a stale Release = %d, want 3", s.SlotsInUse)
		}
		b.Release()
		c.Release()
		if s := g.Snapshot(); s.SlotsInUse != 0 {
			t.Errorf("SlotsInUse after releasing all = %d, want 0", s.SlotsInUse)
		}
	})
}

func TestHysteresis(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// CPU: stop above 80%, resume at or below 72%. Available memory: stop
		// below 200 bytes, resume at or above 220.
		g, f := setup(t, governor.Config{MinAvailableMemory: 200}, reading(50, 100))
		steps := []struct {
			cpu   float64
			used  uint64
			admit bool
		}{
			{50, 100, true},
			{85, 100, false}, // over
			{75, 100, false}, // below the limit, above the low watermark
			{79, 100, false},
			{72, 100, true}, // at the low watermark
			{79, 100, true}, // below the limit again
			{81, 100, false},
			{60, 100, true},
			{60, 801, false}, // 199 available
			{60, 790, false}, // 210 available
			{60, 780, true},  // 220 available
			{60, 790, true},
		}
		for i, s := range steps {
			if i > 0 {
				sample(f, reading(s.cpu, s.used), nil)
			}
			if got := tryAcquire(g); got != s.admit {
				t.Errorf("step %d (cpu %v%%, used %d): TryAcquire = %v, want %v", i, s.cpu, s.used, got, s.admit)
			}
		}
	})
}

func TestHysteresisOff(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g, f := setup(t, governor.Config{Hysteresis: -1}, reading(85, 100))
		if tryAcquire(g) {
			t.Fatal("TryAcquire over the CPU limit succeeded")
		}
		sample(f, reading(80, 100), nil)
		if !tryAcquire(g) {
			t.Error("TryAcquire at the CPU limit without hysteresis failed")
		}
	})
}

func TestWeight(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// Memory room: 90% of 1000 - 500 = 400 bytes. CPU room: 80 - 50 = 30 points.
		g, f := setup(t, governor.Config{Slots: 10}, reading(50, 500))
		if _, ok := g.TryAcquire("", governor.Weight{Memory: 300}); !ok {
			t.Fatal("TryAcquire of 300 of 400 bytes failed")
		}
		if _, ok := g.TryAcquire("", governor.Weight{Memory: 101}); ok {
			t.Error("TryAcquire of 101 of the 100 bytes left succeeded")
		}
		if _, ok := g.TryAcquire("", governor.Weight{CPUPercent: 20}); !ok {
			t.Error("TryAcquire of 20 of 30 CPU points failed")
		}
		if _, ok := g.TryAcquire("", governor.Weight{Memory: 100, CPUPercent: 11}); ok {
			t.Error("TryAcquire of 11 of the 10 CPU points left succeeded")
		}
		if _, ok := g.TryAcquire("", governor.Weight{Memory: 100, CPUPercent: 10}); !ok {
			t.Error("TryAcquire of the last 100 bytes and 10 CPU points failed (was memory kept by the failed try?)")
		}
		if s := g.Snapshot(); s.SlotsInUse != 3 {
			t.Errorf("SlotsInUse = %d, want 3 (failed tries hold nothing)", s.SlotsInUse)
		}
		sample(f, reading(50, 500), nil) // a new sample replaces the reservations
		if _, ok := g.TryAcquire("", governor.Weight{Memory: 400, CPUPercent: 30}); !ok {
			t.Error("TryAcquire of the whole room after a new sample failed")
		}
	})
}

func TestInvalidWeight(t *testing.T) {
	t.Parallel()
	g, err := governor.New(governor.Config{Slots: 2, Sampler: &fakeSampler{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []governor.Weight{
		{Slots: 3}, {Slots: -1}, {CPUPercent: -1}, {CPUPercent: 101}, {CPUPercent: math.NaN()}, {Memory: math.MaxUint64},
	} {
		if _, ok := g.TryAcquire("", w); ok {
			t.Errorf("TryAcquire(%+v) succeeded", w)
		}
		if _, err := g.Acquire(t.Context(), "", w); !errors.Is(err, governor.ErrInvalidWeight) {
			t.Errorf("Acquire(%+v) = %v, want ErrInvalidWeight", w, err)
		}
	}
}

func TestStalePolicy(t *testing.T) {
	t.Parallel()
	errSampler := errors.New("sampler broke")
	for _, policy := range []governor.StalePolicy{governor.StaleAdmit, governor.StaleRefuse} {
		t.Run(policy.String(), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				g, f := setup(t, governor.Config{StalePolicy: policy}, reading(90, 100))
				if tryAcquire(g) {
					t.Fatal("TryAcquire over the CPU limit succeeded")
				}
				sample(f, reading(10, 100), errSampler)
				s := g.Snapshot()
				if !s.Stale || !errors.Is(s.Err, errSampler) || s.CPUPercent != 90 || s.Age != interval {
					t.Errorf("Snapshot after a failed sample = %+v; want stale, the error and the last good reading, 1s old", s)
				}
				if got, want := tryAcquire(g), policy == governor.StaleAdmit; got != want {
					t.Errorf("TryAcquire while stale = %v, want %v", got, want)
				}
				// A blocked Acquire is served by the next good sample.
				done := make(chan error, 1)
				if policy == governor.StaleRefuse {
					go func() {
						p, err := g.Acquire(t.Context(), "", governor.Weight{})
						p.Release()
						done <- err
					}()
					synctest.Wait()
					if s := g.Snapshot(); s.Waiting != 1 {
						t.Fatalf("Waiting = %d, want 1", s.Waiting)
					}
				}
				sample(f, reading(10, 100), nil)
				if s := g.Snapshot(); s.Stale || s.Err != nil || s.CPUPercent != 10 {
					t.Errorf("Snapshot after a good sample = %+v", s)
				}
				if policy == governor.StaleRefuse {
					if err := <-done; err != nil {
						t.Errorf("Acquire = %v", err)
					}
				}
				if !tryAcquire(g) {
					t.Error("TryAcquire after a good sample failed")
				}
			})
		})
	}
}

func TestBeforeStart(t *testing.T) {
	t.Parallel()
	for _, policy := range []governor.StalePolicy{governor.StaleAdmit, governor.StaleRefuse} {
		g, err := governor.New(governor.Config{StalePolicy: policy, Sampler: &fakeSampler{r: reading(99, 999)}})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := tryAcquire(g), policy == governor.StaleAdmit; got != want {
			t.Errorf("%v: TryAcquire before Start = %v, want %v", policy, got, want)
		}
		if s := g.Snapshot(); !s.Stale || !s.SampledAt.IsZero() {
			t.Errorf("%v: Snapshot before Start = %+v, want stale and never sampled", policy, s)
		}
	}
}

func TestSamplingLoop(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := &fakeSampler{r: reading(10, 100)}
		g, err := governor.New(governor.Config{Sampler: f, Interval: interval})
		if err != nil {
			t.Fatal(err)
		}
		if f.count() != 0 {
			t.Fatal("New sampled")
		}
		if err := g.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := g.Start(t.Context()); err != nil { // no second loop
			t.Fatal(err)
		}
		if n := f.count(); n != 1 {
			t.Fatalf("samples after Start = %d, want 1", n)
		}
		time.Sleep(3*interval + interval/2)
		synctest.Wait()
		if n := f.count(); n != 4 {
			t.Errorf("samples after 3.5 intervals = %d, want 4", n)
		}
		if s := g.Snapshot(); s.Age != interval/2 || s.Stale {
			t.Errorf("Snapshot = %+v, want a fresh sample 500ms old", s)
		}
		if err := g.Stop(t.Context()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * interval)
		if n := f.count(); n != 4 {
			t.Errorf("samples after Stop = %d, want still 4", n)
		}
	})
}

func TestStop(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g, _ := setup(t, governor.Config{Slots: 1}, reading(10, 100))
		held, _ := g.TryAcquire("q", governor.Weight{})
		done := make(chan error, 1)
		go func() {
			_, err := g.Acquire(t.Context(), "", governor.Weight{})
			done <- err
		}()
		synctest.Wait()
		if err := g.Stop(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := <-done; !errors.Is(err, governor.ErrStopped) {
			t.Errorf("blocked Acquire after Stop = %v, want ErrStopped", err)
		}
		held.Release()
		if tryAcquire(g) {
			t.Error("TryAcquire after Stop succeeded")
		}
		if _, err := g.Acquire(t.Context(), "", governor.Weight{}); !errors.Is(err, governor.ErrStopped) {
			t.Errorf("Acquire after Stop = %v, want ErrStopped", err)
		}
		if err := g.Start(t.Context()); !errors.Is(err, governor.ErrStopped) {
			t.Errorf("Start after Stop = %v, want ErrStopped", err)
		}
		if err := g.Stop(t.Context()); err != nil {
			t.Errorf("second Stop = %v", err)
		}
	})
}

func TestStopWithoutStart(t *testing.T) {
	t.Parallel()
	g, err := governor.New(governor.Config{Sampler: &fakeSampler{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Stop(t.Context()); err != nil {
		t.Errorf("Stop without Start = %v", err)
	}
}

func TestStopHonoursContext(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		block := make(chan struct{})
		var calls atomic.Int32
		slow := governor.SamplerFunc(func(ctx context.Context) (governor.Reading, error) {
			if calls.Add(1) > 1 {
				<-block // a sampler that ignores its context
			}
			return reading(10, 100), nil
		})
		g, err := governor.New(governor.Config{Sampler: slow, Interval: interval})
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(interval) // the second sample blocks
		synctest.Wait()
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if err := g.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Stop with a stuck sampler = %v, want DeadlineExceeded", err)
		}
		close(block)
		if err := g.Stop(t.Context()); err != nil {
			t.Errorf("Stop after the sampler returned = %v", err)
		}
	})
}

func TestStartWithAStuckSampler(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		block := make(chan struct{})
		stuck := governor.SamplerFunc(func(ctx context.Context) (governor.Reading, error) {
			<-block // ignores its context
			return reading(10, 100), nil
		})
		g, err := governor.New(governor.Config{Sampler: stuck, StalePolicy: governor.StaleRefuse})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if err := g.Start(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Start with a stuck first sample = %v, want DeadlineExceeded", err)
		}
		if err := g.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Stop with a stuck sample = %v, want DeadlineExceeded", err)
		}
		close(block)
		if err := g.Stop(t.Context()); err != nil {
			t.Errorf("Stop after the sample returned = %v", err)
		}
		if tryAcquire(g) {
			t.Error("TryAcquire after Stop succeeded")
		}
	})
}

func TestStartCancelled(t *testing.T) {
	t.Parallel()
	g, err := governor.New(governor.Config{Sampler: &fakeSampler{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := g.Start(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Start(cancelled) = %v, want Canceled", err)
	}
	if err := g.Stop(t.Context()); err != nil {
		t.Error(err)
	}
}
