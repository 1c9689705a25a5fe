package governor_test

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/governor"
)

// A waiter short of room holds up the work behind it for at most MaxHold
// and an Interval also when NowFunc steps back (a wall clock set back an
// hour while it waits): its phases go on changing at the samples, rather
// than waiting until NowFunc is past the instant it arrived at again.
func TestMaxHoldWhenNowFuncStepsBack(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var back atomic.Int64 // how far NowFunc is behind the clock
		now := func() time.Time { return time.Now().Add(-time.Duration(back.Load())) }
		busy := reading(10, 500) // room: 90% of 1000 - 500 = 400 bytes
		g, f := setup(t, governor.Config{Slots: 8, MaxHold: interval, NowFunc: now}, busy)
		big := acquireAsync(t.Context(), g, governor.Weight{Memory: 450})
		synctest.Wait()
		back.Store(int64(time.Hour)) // while the big waiter holds
		behind := acquireAsync(t.Context(), g, governor.Weight{Memory: 100})
		// MaxHold and an Interval to spare, and one more sample: the
		// waiter behind the big one must have passed it.
		for range 4 {
			sample(f, busy, nil)
		}
		r := served(t, behind, "the waiter behind the big one, past MaxHold and an Interval after NowFunc stepped back")
		if r.err != nil {
			t.Fatal(r.err)
		}
		r.p.Release()
		if !blocked(big) {
			t.Fatal("the big waiter was served without room")
		}
	})
}
