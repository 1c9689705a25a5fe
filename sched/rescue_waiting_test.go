package sched_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// An entry rescued while it waits in a batch (its lease lapsed behind a long
// batch-mate that heartbeats) never ran: it goes back to pending and must
// spend no rerun, as an entry put back by its batch's scope spends none
// (schedtest: "an entry never started counted a rerun"). Reruns count
// toward MaxReruns: with MaxReruns 1, its own first Rerun then poisons it.
func TestRescueOfAWaitingEntrySpendsNoRerun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := must.New(t, sched.Config{Workers: 1, Logger: quiet})
		hb, hbDone, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
		type run struct{ reruns int }
		var bRuns []run
		q := must.Queue(t, s, "q", sched.QueueConfig[string, string]{
			BatchSize: 2,
			Lease:     10 * time.Millisecond,
			MaxReruns: 1,
			Handler: func(ctx context.Context, j *sched.Job[string, string]) error {
				if j.Key == "a" {
					for {
						select {
						case <-release:
							return nil
						case <-hb:
							if err := j.Heartbeat(ctx); err != nil {
								t.Error(err)
							}
							hbDone <- struct{}{}
						}
					}
				}
				bRuns = append(bRuns, run{j.Reruns})
				if len(bRuns) == 1 {
					return sched.Rerun(nil) // its one allowed rerun
				}
				return nil
			},
		})
		must.Add(t, q, "a")
		b := must.Add(t, q, "b") // one batch: a, then b
		in := s.Inspector()
		in.EnableRescue()
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := s.Stop(ctx); err != nil {
				t.Error(err)
			}
		}()
		synctest.Wait() // a runs, b waits in the batch
		time.Sleep(20 * time.Millisecond)
		hb <- struct{}{} // a renews its lease; b's has lapsed
		<-hbDone
		rs, err := in.Reap(ctx, time.Now(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 1 || rs[0].ID != b || rs[0].Running {
			t.Fatalf("Reap = %+v, want b rescued while waiting", rs)
		}
		close(release)
		synctest.Wait()
		e, err := q.Get(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		if len(bRuns) == 0 || bRuns[0].reruns != 0 {
			t.Errorf("b's first run saw Reruns %v, want 0: it never ran before", bRuns)
		}
		if e.State != sched.StateSucceeded {
			t.Errorf("b is %v after %d runs (reruns %d), want succeeded: its one Rerun is within MaxReruns 1", e.State, len(bRuns), e.Reruns)
		}
	})
}
