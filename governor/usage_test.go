package governor_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/governor"
)

func TestUsage(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g, _ := setup(t, governor.Config{Slots: 4, UsageWindow: time.Minute}, reading(10, 100))
		check := func(key string, want time.Duration) {
			t.Helper()
			if got := g.Usage(key); got != want {
				t.Errorf("Usage(%q) = %v, want %v", key, got, want)
			}
		}
		a, _ := g.TryAcquire("a", governor.Weight{Slots: 2})
		b, err := g.Acquire(t.Context(), "b", governor.Weight{})
		if err != nil {
			t.Fatal(err)
		}
		none, _ := g.TryAcquire("", governor.Weight{})
		time.Sleep(3 * time.Second)
		b.Release()
		none.Release()
		time.Sleep(7 * time.Second)
		check("a", 20*time.Second) // not released yet: counted so far
		check("b", 3*time.Second)
		a.Release()
		a.Release()
		time.Sleep(5 * time.Second)
		check("a", 20*time.Second)
		check("", 0)
		check("unknown", 0)

		// a held 2 slots during [0s, 10s). At 65s the window is [5s, 65s].
		time.Sleep(50 * time.Second)
		check("a", 10*time.Second)
		time.Sleep(time.Second / 2) // [5.5s, 65.5s]
		check("a", 9*time.Second)
		time.Sleep(time.Second / 2)
		time.Sleep(4 * time.Second) // [10s, 70s]
		check("a", 0)
		check("b", 0)

		// A Permit held for longer than the window is charged for the window only.
		long, _ := g.TryAcquire("long", governor.Weight{})
		time.Sleep(3 * time.Minute)
		check("long", time.Minute)
		time.Sleep(time.Second / 4)
		check("long", time.Minute)
		long.Release()
		time.Sleep(time.Minute / 2)
		check("long", time.Minute/2) // [220.25s, 280.25s] holds 30s of [70s, 250.25s)
	})
}
