package governor_test

import (
	"testing"
	"testing/synctest"

	"github.com/jobkit/jobkit/governor"
)

// Config.MaxHold "defaults to five Intervals": a waiter short of room holds
// up the work behind it for five Intervals, and no longer, before that work
// may pass it (see Acquire).
func TestMaxHoldDefaultsToFiveIntervals(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		busy := reading(10, 500) // room: 90% of 1000 - 500 = 400 bytes
		g, f := setup(t, governor.Config{Slots: 8}, busy)
		big := acquireAsync(t.Context(), g, governor.Weight{Memory: 450})
		synctest.Wait()
		behind := acquireAsync(t.Context(), g, governor.Weight{Memory: 100})
		synctest.Wait()
		for i := range 5 {
			if !blocked(behind) {
				t.Fatalf("%d Intervals after the big waiter came: the waiter behind it was served (MaxHold defaults to 5 Intervals)", i)
			}
			sample(f, busy, nil)
		}
		r := served(t, behind, "the waiter behind the big one, five Intervals on")
		if r.err != nil {
			t.Fatal(r.err)
		}
		r.p.Release()
		if !blocked(big) {
			t.Fatal("the big waiter was served without room")
		}
	})
}
