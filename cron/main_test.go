package cron_test

import (
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/jobkit/jobkit/cron"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Schedules are immutable: one schedule serves many goroutines (run this
// under -race).
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	ny := mustLoad(t, "America/New_York")
	specs := []cron.Schedule{
		mustParse(t, "30 2 * * *", cron.WithLocation(ny)),
		mustParse(t, "@hourly", cron.WithLocation(ny)),
		mustParse(t, "@every 90m", cron.WithLocation(ny)),
	}
	from := time.Date(2026, 3, 7, 0, 0, 0, 0, ny)
	want := make([][]string, len(specs))
	for i, s := range specs {
		want[i] = nexts(s, from, 50)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8*len(specs))
	for range 8 {
		for i, s := range specs {
			wg.Go(func() {
				if got := nexts(s, from, 50); len(got) != len(want[i]) || got[49] != want[i][49] {
					errs <- got[49]
				}
				cron.Due(s, from, from.Add(72*time.Hour), cron.RunOnce)
			})
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("concurrent Next disagrees: %s", e)
	}
}
