package governor_test

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/governor"
)

// TestNowFuncFaultInReleaseLeavesNoKeyHeld checks that a Config.NowFunc
// that panics, or ends the goroutine (runtime.Goexit), as the Release of a
// Permit charged to a key reads it leaves the key holding nothing: its
// usage stops growing, it leaves the window, and the key is evicted a
// window later, as after a Release that charged it. Before, the key went on
// holding the Permit's slots for ever: Usage grew to the whole window and
// stayed there, and the key was never evicted.
func TestNowFuncFaultInReleaseLeavesNoKeyHeld(t *testing.T) {
	t.Parallel()
	for _, goexit := range []bool{false, true} {
		for _, slots := range []int{1, 2} { // one slot: kept by its record
			t.Run(fmt.Sprintf("%s/slots=%d", faultName(goexit), slots), func(t *testing.T) {
				t.Parallel()
				synctest.Test(t, func(t *testing.T) {
					var armed atomic.Bool
					now := func() time.Time {
						if armed.CompareAndSwap(true, false) {
							if goexit {
								runtime.Goexit()
							}
							panic("clock bug")
						}
						return time.Now()
					}
					g, _ := setup(t, governor.Config{Slots: 4, NowFunc: now, UsageWindow: time.Minute}, reading(10, 100))
					p, ok := g.TryAcquire("q", governor.Weight{Slots: slots})
					if !ok {
						t.Fatal("TryAcquire refused")
					}
					time.Sleep(time.Second)
					// The sampling goroutine sleeps until the next tick: the
					// Release alone reads the clock while it is armed.
					armed.Store(true)
					done := make(chan struct{})
					go func() {
						defer close(done)
						defer func() { _ = recover() }()
						p.Release()
					}()
					<-done
					if armed.Load() {
						t.Fatal("Release did not read the clock")
					}
					if s := g.Snapshot(); s.SlotsInUse != 0 {
						t.Fatalf("SlotsInUse after the Release = %d, want 0", s.SlotsInUse)
					}
					time.Sleep(3 * time.Minute)
					synctest.Wait()
					if got := g.Usage("q"); got != 0 {
						t.Errorf("Usage of a key released 3 minutes ago = %v, want 0", got)
					}
					if s := g.Snapshot(); s.Keys != 0 {
						t.Errorf("Keys 3 minutes after the last Release = %d, want 0: the key still holds slots", s.Keys)
					}
				})
			})
		}
	}
}
