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
// Delete lists the queue (here from the Query's Match): the job registered
// again adopts the live entry of the run it was unregistered during, and
// keeps it. Before, the engine's store looked at the registered jobs as
// the filter's Key ran, outside the backend's lock, and the entry was
// deleted later, under it: the job lost its entry and never ran again.
func TestTheInspectorLeavesTheEntryOfAJobRegisteredDuringItsDelete(t *testing.T) {
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
