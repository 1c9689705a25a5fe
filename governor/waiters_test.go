package governor_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/governor"
)

// served waits until the bubble is idle and returns the result sent on c,
// failing the test if there is none: Acquire is still blocked.
func served(t *testing.T, c <-chan result, what string) result {
	t.Helper()
	synctest.Wait()
	if blocked(c) {
		t.Fatalf("%s still waits", what)
	}
	return <-c
}

// TestWeightThatCanNeverFit checks that a Weight asking for more memory or
// CPU than the limits allow even on an idle machine is refused at once with
// ErrInvalidWeight, without a deadline, and holds up nothing.
func TestWeightThatCanNeverFit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		cfg            governor.Config
		invalid, valid []governor.Weight
	}{
		// A limit of 1000 bytes: 90% leaves at most 900.
		{"defaults", governor.Config{},
			[]governor.Weight{{Memory: 901}, {Memory: 2000}, {Memory: math.MaxInt64}, {CPUPercent: 80.001}, {CPUPercent: 100}, {Memory: 1, CPUPercent: 81}},
			[]governor.Weight{{Memory: 900}, {CPUPercent: 80}}},
		{"MinAvailableMemory", governor.Config{MinAvailableMemory: 300},
			[]governor.Weight{{Memory: 701}},
			[]governor.Weight{{Memory: 700}}},
		{"limits off", governor.Config{MaxCPUPercent: 100, MaxMemoryPercent: 100},
			[]governor.Weight{{Memory: 1001}},
			[]governor.Weight{{Memory: 1000}, {CPUPercent: 100}}},
		{"custom limits", governor.Config{MaxCPUPercent: 50, MaxMemoryPercent: 50},
			[]governor.Weight{{Memory: 501}, {CPUPercent: 51}},
			[]governor.Weight{{Memory: 500}, {CPUPercent: 50}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				tt.cfg.Slots = 8
				g, _ := setup(t, tt.cfg, reading(0, 900)) // busy: no room for anything
				for _, w := range tt.invalid {
					c := acquireAsync(context.Background(), g, w)
					if r := served(t, c, "Acquire of a weight that can never fit"); !errors.Is(r.err, governor.ErrInvalidWeight) {
						t.Errorf("Acquire(%+v) = %v, want ErrInvalidWeight", w, r.err)
					}
					if _, ok := g.TryAcquire("", w); ok {
						t.Errorf("TryAcquire(%+v) admitted", w)
					}
				}
				if s := g.Snapshot(); s.Waiting != 0 {
					t.Errorf("Waiting = %d after invalid weights, want 0", s.Waiting)
				}
				// Weights at the most the limits allow are valid: granted, or
				// waiting for room.
				ctx, cancel := context.WithCancel(t.Context())
				var cs []<-chan result
				for _, w := range tt.valid {
					cs = append(cs, acquireAsync(ctx, g, w))
				}
				synctest.Wait()
				cancel()
				for i, c := range cs {
					r := <-c
					if r.err != nil && !errors.Is(r.err, context.Canceled) {
						t.Errorf("Acquire(%+v) = %v, want it granted or waiting", tt.valid[i], r.err)
					}
					r.p.Release()
				}
			})
		})
	}
}

// TestWeightOfNoKnownLimit checks that before the first reading, and with a
// reading without memory figures, memory weights are not judged against a
// limit nobody knows.
func TestWeightOfNoKnownLimit(t *testing.T) {
	t.Parallel()
	g, err := governor.New(governor.Config{Sampler: &fakeSampler{}})
	if err != nil {
		t.Fatal(err)
	}
	p, ok := g.TryAcquire("", governor.Weight{Memory: 1 << 40})
	if !ok {
		t.Error("StaleAdmit before Start refused a memory weight")
	}
	p.Release()
	synctest.Test(t, func(t *testing.T) {
		g, _ := setup(t, governor.Config{}, governor.Reading{CPUPercent: 10})
		p, ok := g.TryAcquire("", governor.Weight{Memory: 1 << 40})
		if !ok {
			t.Error("a reading without memory figures refused a memory weight")
		}
		p.Release()
	})
}

// TestWaiterInvalidatedByLowerLimit checks that a waiter whose Weight no
// longer fits the limits after a sample shows a lower memory limit fails with
// ErrInvalidWeight, and the waiters behind it are served.
func TestWaiterInvalidatedByLowerLimit(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g, f := setup(t, governor.Config{Slots: 4}, reading(10, 500)) // 400 bytes of room
		big := acquireAsync(context.Background(), g, governor.Weight{Memory: 800})
		synctest.Wait()
		small := acquireAsync(context.Background(), g, governor.Weight{})
		// The limit drops to 500 bytes, of which 100 are used: at most 450 fit.
		sample(f, governor.Reading{CPUPercent: 10, MemoryUsed: 100, MemoryAvailable: 400, MemoryLimit: 500}, nil)
		if r := served(t, big, "a waiter of 800 bytes under a 500-byte limit"); !errors.Is(r.err, governor.ErrInvalidWeight) {
			t.Errorf("Acquire = %v, want ErrInvalidWeight", r.err)
		}
		r := served(t, small, "the waiter behind it")
		if r.err != nil {
			t.Fatal(r.err)
		}
		r.p.Release()
	})
}

// TestWaiterShortOfRoom checks that a waiter whose Weight fits the limits but
// not the room the latest reading leaves holds up the work behind it for
// Config.MaxHold, so that running work can make room, then lets work that
// fits pass for as long, and so on, until it is granted: neither it nor the
// work behind it waits for longer than MaxHold at a time. Memory and CPU
// weights behave alike.
func TestWaiterShortOfRoom(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		busy, idle governor.Reading
		big, small governor.Weight
	}{
		// Room: 90% of 1000 - 500 = 400 bytes.
		{"memory", reading(10, 500), reading(10, 0), governor.Weight{Memory: 450}, governor.Weight{Memory: 100}},
		// Room: 80 - 40 = 40 points.
		{"cpu", reading(40, 100), reading(0, 100), governor.Weight{CPUPercent: 50}, governor.Weight{CPUPercent: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				const hold = 3 * interval
				g, f := setup(t, governor.Config{Slots: 8, MaxHold: hold}, tt.busy)
				big := acquireAsync(t.Context(), g, tt.big)
				synctest.Wait()
				behind := acquireAsync(t.Context(), g, tt.small)
				synctest.Wait()
				// Holding: nothing passes, for MaxHold.
				for i := range 3 {
					if !blocked(behind) {
						t.Fatalf("%d intervals after the big waiter came: the waiter behind it was served", i)
					}
					if tryAcquire(g) {
						t.Fatalf("%d intervals after the big waiter came: TryAcquire overtook it", i)
					}
					sample(f, tt.busy, nil)
				}
				// Passed over: work that fits is admitted, for MaxHold.
				r := served(t, behind, "the waiter behind the big one after MaxHold")
				if r.err != nil {
					t.Fatal(r.err)
				}
				r.p.Release()
				for i := range 3 {
					if !tryAcquire(g) {
						t.Fatalf("%d intervals into being passed over: TryAcquire refused", i)
					}
					p, ok := g.TryAcquire("", tt.small)
					if !ok {
						t.Fatalf("%d intervals into being passed over: TryAcquire(%+v) refused", i, tt.small)
					}
					p.Release()
					r := served(t, acquireAsync(t.Context(), g, tt.small), "Acquire while the big waiter is passed over")
					r.p.Release()
					sample(f, tt.busy, nil)
				}
				if !blocked(big) {
					t.Fatal("the big waiter was served without room")
				}
				// Holding again: later work waits, and is served after it.
				if tryAcquire(g) {
					t.Fatal("TryAcquire overtook the big waiter in its second hold")
				}
				behind = acquireAsync(t.Context(), g, governor.Weight{})
				synctest.Wait()
				if !blocked(behind) {
					t.Fatal("a waiter overtook the big waiter in its second hold")
				}
				sample(f, tt.idle, nil)
				for _, c := range []<-chan result{big, behind} {
					r := served(t, c, "Acquire once there is room")
					if r.err != nil {
						t.Fatal(r.err)
					}
					r.p.Release()
				}
			})
		})
	}
}

// TestWaiterShortOfRoomStopped checks that Stop fails a waiter short of room.
func TestWaiterShortOfRoomStopped(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g, _ := setup(t, governor.Config{MaxHold: time.Hour}, reading(10, 500))
		c := acquireAsync(context.Background(), g, governor.Weight{Memory: 450})
		synctest.Wait()
		if err := g.Stop(t.Context()); err != nil {
			t.Fatal(err)
		}
		if r := served(t, c, "Acquire after Stop"); !errors.Is(r.err, governor.ErrStopped) {
			t.Errorf("Acquire after Stop = %v, want ErrStopped", r.err)
		}
	})
}

func TestMaxHoldNegative(t *testing.T) {
	t.Parallel()
	if _, err := governor.New(governor.Config{MaxHold: -time.Second}); !errors.Is(err, governor.ErrInvalidConfig) {
		t.Errorf("New with a negative MaxHold = %v, want ErrInvalidConfig", err)
	}
}
