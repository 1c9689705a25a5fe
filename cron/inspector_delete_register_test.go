package cron_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/cron"
	"github.com/jobkit/jobkit/sched"
)

// The Inspector's Delete leaves the entry of a job registered while the
// Delete lists the queue: the engine's store tells the job's entry by
// whether its name is registered as the filter's Key runs, outside the
// backend's lock, and the entry is deleted later, under it. A job
// registered again in between (it adopts the live entry of the run it
// was unregistered during) lost the entry and never ran again.
func TestTheInspectorLeavesTheEntryOfAJobRegisteredDuringItsDelete(t *testing.T) {
	t.Skip("BUG: store.Delete checks registered in the filter's Key, which Memory runs outside its lock before it deletes under it; " +
		"a Register in between (here from the Query's Match, or any goroutine) adopts the live entry and loses it: " +
		"a fix needs the check where the entry is deleted (under the backend's lock) or the entry placed again after the delete")
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sleepUntil(at(0, 0).Add(30 * time.Second))
		e, s := sharedEngine(t)
		started, release := make(chan struct{}), make(chan struct{})
		must(t, e.RegisterSpec(ctx, "job", "*/10 * * * *", func(context.Context, time.Time) error {
			close(started)
			<-release
			return nil
		}, cron.WithLocation(time.UTC)))
		sleepUntil(at(0, 10).Add(30 * time.Second))
		<-started
		must(t, e.Unregister(ctx, "job")) // its entry, running, stays live until the run ends
		log := newRunLog()
		in := s.Inspector()
		registered := false
		_, err := in.Delete(ctx, sched.Query{Queues: []string{"cron"}, KeyPrefix: "job", Match: func(*sched.Summary) bool {
			if !registered {
				// Registered again between the store's look and the
				// delete: it takes over the live entry, which its run's
				// end snoozes until 00:20.
				registered = true
				must(t, e.RegisterSpec(ctx, "job", "*/10 * * * *", log.fn("job", nil), cron.WithLocation(time.UTC)))
				close(release)
				synctest.Wait()
			}
			return true
		}})
		must(t, err)
		sleepUntil(at(0, 30).Add(30 * time.Second))
		synctest.Wait()
		if runs := len(log.get("job")); runs != 2 {
			t.Errorf("%d runs of the job registered again by 00:30:30, want 2 (00:20, 00:30); live entries %+v", runs, liveEntries(t, s, "job"))
		}
	})
}
