package governor_test

import (
	"testing"
	"testing/synctest"

	"github.com/jobkit/jobkit/governor"
)

// Config.Hysteresis applies to MaxMemoryPercent as to the CPU limit: with
// the defaults (90%, 0.1) admission stops above 90% of the memory limit and
// resumes at or below 81%, not as soon as the reading is below 90% again.
func TestMemoryPercentHysteresis(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g, f := setup(t, governor.Config{}, reading(10, 100))
		for i, s := range []struct {
			used  uint64
			admit bool
		}{
			{100, true},
			{950, false}, // over 90%
			{850, false}, // below the limit, above the low watermark
			{820, false},
			{810, true}, // at the low watermark
			{890, true}, // below the limit again
		} {
			if i > 0 {
				sample(f, reading(10, s.used), nil)
			}
			if got := tryAcquire(g); got != s.admit {
				t.Errorf("step %d (%d of 1000 bytes used): TryAcquire = %v, want %v", i, s.used, got, s.admit)
			}
		}
	})
}

// A Weight's Memory is reserved from the headroom the latest reading leaves
// below the limits (see Weight), and MinAvailableMemory is one of them:
// with 500 of 1000 bytes available and MinAvailableMemory 200, 300 bytes
// may be reserved, not 350 (MaxMemoryPercent, 90%, would leave 400).
func TestMemoryRoomKeepsMinAvailableMemory(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g, _ := setup(t, governor.Config{MinAvailableMemory: 200}, reading(10, 500))
		if p, ok := g.TryAcquire("", governor.Weight{Memory: 350}); ok {
			p.Release()
			t.Errorf("TryAcquire of 350 bytes granted with 500 available and MinAvailableMemory 200: %v", g.Snapshot())
		}
		p, ok := g.TryAcquire("", governor.Weight{Memory: 300})
		if !ok {
			t.Errorf("TryAcquire of 300 bytes refused with 500 available and MinAvailableMemory 200: %v", g.Snapshot())
		}
		p.Release()
	})
}

// A Weight is invalid only if it asks for more memory than the limits
// would leave even if nothing were in use (see Weight), and Acquire fails a
// waiter only when a sample makes its Weight invalid. A waiter asking for
// exactly that much (900 bytes of a 1000-byte limit under MaxMemoryPercent
// 90) is valid: it waits through samples that leave it too little room, and
// is granted once one leaves enough.
func TestWaiterAskingForTheWholeCeilingWaits(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g, f := setup(t, governor.Config{}, reading(10, 100))
		c := acquireAsync(t.Context(), g, governor.Weight{Memory: 900})
		synctest.Wait()
		sample(f, reading(10, 100), nil) // 800 bytes of room: it waits
		if !blocked(c) {
			r := <-c
			r.p.Release()
			t.Fatalf("Acquire of the whole ceiling returned %v with 800 bytes of room; want it waiting", r.err)
		}
		sample(f, reading(10, 0), nil) // 900 bytes of room
		if blocked(c) {
			t.Fatal("Acquire of 900 bytes still blocked with 900 bytes of room")
		}
		r := <-c
		if r.err != nil {
			t.Errorf("Acquire of the whole ceiling = %v; want granted", r.err)
		}
		r.p.Release()
	})
}
