package sched_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
)

// An entry disabled while it runs and then fails is final and enabled,
// and RetryID makes it run. Before, it kept Disabled in its final state:
// it was listed as a disabled failed entry, which Enable refused
// (ErrWrongState: not live), and RetryID made it pending but, still
// disabled, it never ran.
func TestAnEntryDisabledWhileRunningRunsWhenRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
		started := make(chan struct{}, 4)
		release := make(chan struct{})
		q, err := sched.NewQueue(s, "q", sched.QueueConfig[int, int]{
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				started <- struct{}{}
				if j.Attempt == 1 {
					<-release
					return sched.Permanent(errors.New("first run fails"))
				}
				return nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		id, _, err := q.Add(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		<-started
		if err := q.Disable(ctx, id); err != nil { // running: live
			t.Fatal(err)
		}
		close(release)
		synctest.Wait()
		in := s.Inspector()
		e, err := in.Get(ctx, "q", id)
		if err != nil || e.State != sched.StateFailed {
			t.Fatalf("Get = %+v, %v; want failed", e, err)
		}
		if e.Disabled {
			t.Errorf("the failed entry is listed as disabled, and Enable refuses it: %v", in.Enable(ctx, "q", id))
		}
		if err := in.RetryID(ctx, "q", id, true); err != nil {
			t.Fatal(err)
		}
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			e, _ := in.Get(ctx, "q", id)
			t.Errorf("the retried entry has not run in 10 s: %v, disabled %v", e.State, e.Disabled)
			_ = q.Enable(ctx, id) // so that Stop returns
			<-started
		}
	})
}
