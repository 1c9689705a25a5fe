package cron_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/cron"
	"github.com/jobkit/jobkit/sched"
)

// A job unregistered while it runs leaves no entry behind when its run
// ends as a rerun (the shared scheduler's StopAndCancel abandons it): the
// entry ends, as it does when the run ends otherwise. Before, a rerun went
// back to pending whatever the job's state, and stayed there, live, under
// the name of no job.
func TestARerunOfAnUnregisteredJobEndsItsEntry(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sleepUntil(at(0, 0).Add(30 * time.Second))
		e, s := sharedEngine(t) // its cleanup's Stops come after this test's
		running, release := make(chan struct{}), make(chan struct{})
		must(t, e.RegisterSpec(ctx, "job", "0 * * * *", func(context.Context, time.Time) error {
			close(running)
			<-release // ignores its context: StopAndCancel abandons it
			return nil
		}, cron.WithLocation(time.UTC)))
		sleepUntil(at(1, 0).Add(30 * time.Second))
		<-running
		must(t, e.Unregister(ctx, "job"))
		done, cancel := context.WithCancel(ctx)
		cancel()
		if err := s.StopAndCancel(done); !errors.Is(err, sched.ErrAbandoned) {
			t.Fatalf("StopAndCancel = %v, want ErrAbandoned", err)
		}
		if live := liveEntries(t, s, "job"); len(live) != 0 {
			t.Errorf("live entries of the unregistered job after its run was abandoned: %+v, want none", live)
		}
		close(release)
	})
}
