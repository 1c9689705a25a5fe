package cron_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/cron"
)

// scaleWorkers is the workers of the engine in TestEngine_Scale.
const scaleWorkers = 16

// TestEngine_Scale registers 10,000 jobs (and, for comparison, 100), each
// running once an hour at its own second (about three due together), and
// runs them for three simulated hours: every run starts at its scheduled
// instant, and the goroutines the engine adds are its scheduler's (workers,
// two loops, a janitor), however many jobs there are. It logs the heap per
// registered job.
//
// It is not parallel, so that the goroutine and heap counts are the
// engine's alone.
func TestEngine_Scale(t *testing.T) {
	var goroutines [2]int
	for k, n := range []int{100, 10000} {
		synctest.Test(t, func(t *testing.T) {
			ctx := context.Background()
			// Half a second before the hour: each job runs in each of
			// the next three hours.
			sleepUntil(time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC).Add(-500 * time.Millisecond))
			start := time.Now()
			g0 := runtime.NumGoroutine()
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)

			e, err := cron.New(cron.Config{Workers: scaleWorkers})
			must(t, err)
			runs := make([]atomic.Int32, n)
			var late atomic.Int64
			for i := range n {
				spec := fmt.Sprintf("%d %d * * * *", i%60, (i/60)%60)
				must(t, e.RegisterSpec(ctx, fmt.Sprintf("job-%05d", i), spec, func(_ context.Context, at time.Time) error {
					runs[i].Add(1)
					if !time.Now().Equal(at) {
						late.Add(1)
					}
					return nil
				}, cron.WithLocation(time.UTC)))
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			t.Logf("%d jobs: %.0f bytes of heap per registered job", n, float64(after.HeapAlloc-before.HeapAlloc)/float64(n))

			must(t, e.Start(ctx))
			sleepUntil(start.Add(90 * time.Minute)) // between runs
			goroutines[k] = runtime.NumGoroutine() - g0
			sleepUntil(start.Add(3 * time.Hour))
			must(t, e.Stop(ctx))
			for i := range runs {
				if r := runs[i].Load(); r != 3 {
					t.Fatalf("job %d ran %d times, want 3", i, r)
				}
			}
			if l := late.Load(); l != 0 {
				t.Errorf("%d runs did not start at their scheduled instant", l)
			}
		})
	}
	t.Logf("goroutines added by the engine: %d with 100 jobs, %d with 10,000", goroutines[0], goroutines[1])
	// The same, within one that may be passing (a worker between batches,
	// say): the count does not grow with the jobs.
	if goroutines[1] > goroutines[0]+1 || max(goroutines[0], goroutines[1]) > scaleWorkers+4 {
		t.Errorf("goroutines added: %d with 100 jobs, %d with 10,000; want no growth with the jobs, at most %d", goroutines[0], goroutines[1], scaleWorkers+4)
	}
}
