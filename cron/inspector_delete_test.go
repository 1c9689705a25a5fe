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

// The engine keeps exactly one entry per job. On a shared scheduler its
// queue is open to the scheduler's Inspector (and so to schedhttp's
// management API), where the entry of a registered job is not deleted,
// disabled or enabled: Delete leaves it, DeleteID, Disable and Enable
// return ErrWrongState, and the job runs at each of its times. Before,
// a delete there left the job registered, listed with a next time, and
// never run again; a disable, until the job was paused and resumed.
func TestTheInspectorLeavesTheEntriesOfRegisteredJobs(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sleepUntil(at(0, 0).Add(30 * time.Second))
		e, s := sharedEngine(t)
		log := newRunLog()
		must(t, e.RegisterSpec(ctx, "job", "*/10 * * * *", log.fn("job", nil), cron.WithLocation(time.UTC)))
		sleepUntil(at(0, 10).Add(30 * time.Second))
		synctest.Wait()
		in := s.Inspector()
		live := liveEntries(t, s, "job")
		if len(live) != 1 {
			t.Fatalf("%d live entries, want 1", len(live))
		}
		id := live[0].ID
		if n, err := in.Delete(ctx, sched.Query{Queues: []string{"cron"}, KeyPrefix: "job"}); n != 0 || err != nil {
			t.Errorf("Inspector.Delete of the job's entries = %d, %v; want 0, nil", n, err)
		}
		if err := in.DeleteID(ctx, "cron", id); !errors.Is(err, sched.ErrWrongState) {
			t.Errorf("Inspector.DeleteID of the job's entry = %v, want ErrWrongState", err)
		}
		for _, f := range []func(context.Context, string, sched.ID) error{in.Disable, in.Enable} {
			if err := f(ctx, "cron", id); !errors.Is(err, sched.ErrWrongState) {
				t.Errorf("Inspector.Disable or Enable of the job's entry = %v, want ErrWrongState", err)
			}
		}
		sleepUntil(at(1, 0).Add(30 * time.Second))
		synctest.Wait()
		if runs := len(log.get("job")); runs != 6 {
			t.Errorf("%d runs by 01:00:30, want 6 (00:10 to 01:00)", runs)
		}
		// Pause and Resume still disable and enable it, through the engine.
		must(t, e.Pause(ctx, "job"))
		if live := liveEntries(t, s, "job"); len(live) != 1 || !live[0].Disabled {
			t.Errorf("paused: live entries %+v, want one, disabled", live)
		}
		must(t, e.Resume(ctx, "job"))
		must(t, e.Unregister(ctx, "job"))
		if live := liveEntries(t, s, "job"); len(live) != 0 {
			t.Errorf("unregistered: live entries %+v, want none", live)
		}
	})
}
