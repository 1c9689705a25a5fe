package recovery_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/recovery"
	"github.com/jobkit/jobkit/sched"
)

// An OnAlert that calls runtime.Goexit at a look's first TakenTooOften
// alert ends that look ("nothing is lost but the rest of that look"): the
// alerts the look had not raised yet, of other entries still running, are
// raised by the next look. They were marked raised before they were, so
// they never were while those runs went on.
func TestGoexitInOnAlertLosesNoOtherAlert(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, err := sched.New(sched.Config{Workers: 2, Loops: 1, Logger: quiet})
		must(t, err)
		var (
			mu     sync.Mutex
			alerts = map[sched.ID]int{}
			exited bool
		)
		r, err := recovery.New(s, recovery.Config{
			Interval: time.Minute, TakenThreshold: 1, StallThreshold: -1, Logger: quiet,
			OnAlert: func(a recovery.Alert) {
				mu.Lock()
				alerts[a.ID]++
				first := !exited
				exited = true
				mu.Unlock()
				if first {
					runtime.Goexit()
				}
			},
		})
		must(t, err)
		finish := make(chan struct{})
		q, err := sched.NewQueue(s, "q", sched.QueueConfig[int, int]{
			Lease: time.Hour,
			Retry: &sched.RetryPolicy{MaxRetries: 1, Base: time.Nanosecond},
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				if j.Attempt == 1 {
					return errors.New("again")
				}
				<-finish // the second runs go on: taken twice
				return nil
			},
		})
		must(t, err)
		must(t, s.Start(ctx))
		defer func() {
			close(finish)
			must(t, s.Stop(ctx))
		}()
		e1 := add(t, q, 1)
		e2 := add(t, q, 2)
		time.Sleep(time.Second)
		synctest.Wait() // both second runs in progress
		must(t, r.Start(ctx))
		time.Sleep(3 * time.Minute) // three looks
		synctest.Wait()
		must(t, r.Stop(ctx))
		mu.Lock()
		defer mu.Unlock()
		if alerts[e1] != 1 || alerts[e2] != 1 {
			t.Errorf("TakenTooOften alerts: %d for %d, %d for %d; want one each", alerts[e1], e1, alerts[e2], e2)
		}
	})
}
