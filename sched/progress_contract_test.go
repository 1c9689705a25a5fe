package sched_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// Job.Progress records what the handler reports of its run: it returns nil
// while the run is the entry's current one, and Get shows the progress
// while the run goes on.
func TestProgressIsShownWhileTheRunGoesOn(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
		release := make(chan struct{})
		reported := make(chan error, 1)
		want := sched.Progress{Done: 3, Total: 7, Note: "copying"}
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				reported <- j.Progress(ctx, want)
				<-release
				return nil
			},
		})
		id := must.Add(t, q, 1)
		if err := <-reported; err != nil {
			t.Errorf("Progress during the run = %v, want nil", err)
		}
		e, err := q.Get(ctx, id)
		close(release)
		if err != nil || e.State != sched.StateRunning || e.Progress != want {
			t.Errorf("during the run: %v with progress %+v (%v); want running with %+v", e.State, e.Progress, err, want)
		}
	})
}
