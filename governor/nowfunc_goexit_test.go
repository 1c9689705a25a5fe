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

// A Config.NowFunc that ends the goroutine reading it (runtime.Goexit), in
// an Acquire, a TryAcquire or a Release of a Permit charged to a key,
// loses no slot: every slot can be taken again afterwards. The sweep ends
// the k-th reading after the start, for k up to twice the six readings the
// three permits make (the sampling's own readings come between), with
// permits of one slot (kept by their records when released) and of two.
func TestNowFuncGoexitLosesNoSlot(t *testing.T) {
	t.Parallel()
	for _, slots := range []int{1, 2} {
		for k := int64(1); k <= 12; k++ {
			t.Run(fmt.Sprintf("slots=%d/k=%d", slots, k), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					var calls, armed atomic.Int64
					now := func() time.Time {
						if a := armed.Load(); a > 0 && calls.Add(1) == a {
							runtime.Goexit()
						}
						return time.Now()
					}
					g, _ := setup(t, governor.Config{Slots: 4, NowFunc: now}, reading(10, 100))
					armed.Store(k)
					w := governor.Weight{Slots: slots}
					for i := range 3 {
						go func() { // each on a goroutine of its own, which the reading may end
							var p governor.Permit
							if i%2 == 0 {
								p, _ = g.TryAcquire("q", w)
							} else {
								p, _ = g.Acquire(t.Context(), "q", w)
							}
							time.Sleep(time.Second)
							p.Release()
						}()
						synctest.Wait()
					}
					time.Sleep(time.Minute)
					synctest.Wait()
					armed.Store(0)
					for n := range 4 {
						if _, ok := g.TryAcquire("", governor.Weight{}); !ok {
							t.Fatalf("slot %d of 4 refused: the goroutine ended at reading %d of %d lost one", n+1, k, calls.Load())
						}
					}
				})
			})
		}
	}
}
