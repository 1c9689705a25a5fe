package cron_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/cron"
)

// Config.LeaderFunc: a run skipped because this process is not the leader
// "is not recorded": JobInfo.Last, the scheduled time of the last run that
// started, stays that of the last run that did.
func TestRunSkippedByTheLeaderFuncIsNotRecorded(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sleepUntil(at(0, 0).Add(30 * time.Second))
		var follower atomic.Bool
		e := startEngine(t, cron.Config{LeaderFunc: func() bool { return !follower.Load() }})
		log := newRunLog()
		must(t, e.RegisterSpec(ctx, "job", "0 * * * *", log.fn("job", nil), cron.WithLocation(time.UTC)))
		sleepUntil(at(1, 30))
		synctest.Wait()
		follower.Store(true) // not the leader at 02:00
		sleepUntil(at(2, 30))
		synctest.Wait()
		info, _ := e.Job("job")
		if !info.Last.Equal(at(1, 0)) || info.Runs != 1 {
			t.Errorf("after a run at 01:00 and a skip at 02:00: Last %v, Runs %d; want Last 01:00, 1 run", info.Last, info.Runs)
		}
	})
}
