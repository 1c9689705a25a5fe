package governor_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/governor"
)

// TestMaxHoldShorterThanTheInterval checks Acquire's bound for a MaxHold
// shorter than the Interval: a waiter short of room holds up the work
// behind it "for at most MaxHold at a time (to within one
// Config.Interval)". Each sample read the waiter's phase off the clock as
// (now - since) / MaxHold % 2, which samples taken a multiple of 2·MaxHold
// apart always find even: the waiter held up the work behind it for ever.
func TestMaxHoldShorterThanTheInterval(t *testing.T) {
	t.Parallel()
	for _, hold := range []time.Duration{interval / 2, interval / 10} {
		t.Run(hold.String(), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				busy := reading(10, 500) // room: 90% of 1000 - 500 = 400 bytes
				g, f := setup(t, governor.Config{Slots: 8, MaxHold: hold}, busy)
				big := acquireAsync(t.Context(), g, governor.Weight{Memory: 450})
				synctest.Wait()
				behind := acquireAsync(t.Context(), g, governor.Weight{Memory: 100})
				// MaxHold and an Interval to spare, and one more sample:
				// the waiter behind the big one must have passed it.
				for range 3 {
					sample(f, busy, nil)
				}
				r := served(t, behind, "the waiter behind the big one, past MaxHold and an Interval")
				if r.err != nil {
					t.Fatal(r.err)
				}
				r.p.Release()
				if !blocked(big) {
					t.Fatal("the big waiter was served without room")
				}
			})
		})
	}
}
