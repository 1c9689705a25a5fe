package sched_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// Job.Heartbeat "returns ErrStale, and renews nothing, once the run is no
// longer the entry's current one (it was rescued, or the handler returned
// and the batch has no next run: a Job kept past its handler's return
// stands for the batch's next run, which it renews; see Job)". The doc said
// once that it returned ErrStale whenever the handler had returned.
func TestHeartbeatOfAReturnedRunBeatsTheBatchsNextRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := must.New(t, sched.Config{Workers: 1, Loops: 1, Logger: quiet})
		jobs := make(chan *sched.Job[int, int], 2)
		gate := make(chan struct{})
		q, err := sched.NewQueue(s, "q", sched.QueueConfig[int, int]{Lease: time.Second, BatchSize: 2,
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				jobs <- j
				if j.Payload == 2 {
					<-gate
				}
				return nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= 2; i++ {
			if _, _, err := q.Add(ctx, i); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		first := <-jobs // its handler returned: entry 1 succeeded
		<-jobs          // entry 2 runs
		if err := first.Heartbeat(ctx); err != nil || first.ID != 2 {
			t.Errorf("Heartbeat of a kept Job while the batch's next run runs = %v, for entry %d; want nil, for entry 2", err, first.ID)
		}
		close(gate)
		synctest.Wait()
		if err := first.Heartbeat(ctx); !errors.Is(err, sched.ErrStale) {
			t.Errorf("Heartbeat after the batch ended = %v, want ErrStale", err)
		}
		if err := s.Stop(ctx); err != nil {
			t.Error(err)
		}
	})
}
