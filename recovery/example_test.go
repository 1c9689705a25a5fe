package recovery_test

import (
	"context"
	"fmt"
	"time"

	"github.com/jobkit/jobkit/recovery"
	"github.com/jobkit/jobkit/sched"
)

// A handler that hangs on its first run, deaf to its context, is rescued
// once its lease lapses; the second run succeeds, and the stuck run's late
// result is ignored.
func Example() {
	ctx := context.Background()
	s, _ := sched.New(sched.Config{Workers: 2, Logger: quiet})
	reaper, _ := recovery.New(s, recovery.Config{Interval: 10 * time.Millisecond})
	release, done := make(chan struct{}), make(chan struct{})
	q, _ := sched.NewQueue(s, "reports", sched.QueueConfig[string, string]{
		Lease: 50 * time.Millisecond,
		Handler: func(ctx context.Context, job *sched.Job[string, string]) error {
			if job.Rescues == 0 {
				<-release // stuck
				return fmt.Errorf("too late")
			}
			fmt.Printf("%s: run %d succeeds after %d rescue\n", job.Payload, job.Reruns+1, job.Rescues)
			close(done)
			return nil
		},
	})
	id, _, _ := q.Add(ctx, "monthly")
	s.Start(ctx)
	reaper.Start(ctx)
	<-done
	close(release) // the stuck handler returns at last
	reaper.Stop(ctx)
	s.Stop(ctx)
	e, _ := q.Get(ctx, id)
	fmt.Printf("%v after %d attempt and %d rescue\n", e.State, e.Attempts, e.Rescues)
	// Output:
	// monthly: run 2 succeeds after 1 rescue
	// succeeded after 1 attempt and 1 rescue
}
