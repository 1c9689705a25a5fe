package cron_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/cron"
)

// Unregister with a context that is done: its doc says that the job is
// unregistered all the same and that "its entry ends when it comes due".
// The entry of a paused job is disabled and never comes due: left in the
// queue, it stayed live for ever, for a name no job has. Either Unregister
// changes nothing, or it leaves no entry: with a context done before the
// call, and with one whose deadline passes during it.
func TestUnregisterOfAPausedJobWithADoneContextLeavesNoEntry(t *testing.T) {
	t.Parallel()
	t.Run("done before", func(t *testing.T) {
		done, cancel := context.WithCancel(context.Background())
		cancel()
		testUnregisterPausedWith(t, done)
	})
	t.Run("done during", func(t *testing.T) {
		testUnregisterPausedWith(t, newLateCtx(1))
	})
}

func testUnregisterPausedWith(t *testing.T, done context.Context) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sleepUntil(at(0, 0).Add(30 * time.Second))
		e, s := sharedEngine(t)
		must(t, e.RegisterSpec(ctx, "job", "*/10 * * * *", func(context.Context, time.Time) error { return nil },
			cron.WithLocation(time.UTC)))
		must(t, e.Pause(ctx, "job"))
		_ = e.Unregister(done, "job") // its error, if any, is ctx's
		sleepUntil(at(1, 0).Add(30 * time.Second))
		synctest.Wait()
		if _, ok := e.Job("job"); ok {
			if live := liveEntries(t, s, "job"); len(live) != 1 {
				t.Errorf("job still registered with %d live entries, want 1", len(live))
			}
			return
		}
		if live := liveEntries(t, s, "job"); len(live) != 0 {
			t.Errorf("an hour after Unregister of the paused job: %d live entries (%v, disabled %v), want none",
				len(live), live[0].State, live[0].Disabled)
		}
	})
}
