package sched_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// An entry that snoozes and becomes pending while the rest of its batch
// still runs is taken in turn, at once, by an idle worker: before an entry
// that became pending after it. (It was taken only once its batch ended,
// after the entry added later: its unit stayed in the batch's scope, where
// distinct refused to queue it again.)
func TestAnEntryDueWhileItsBatchRunsIsTakenInTurn(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := must.New(t, sched.Config{Workers: 2, Logger: quiet})
		release := make(chan struct{})
		var mu sync.Mutex
		var order []string
		q := must.Queue(t, s, "q", sched.QueueConfig[string, string]{
			BatchSize: 2,
			Handler: func(ctx context.Context, j *sched.Job[string, string]) error {
				mu.Lock()
				order = append(order, j.Key)
				mu.Unlock()
				switch {
				case j.Key == "x" && j.Reruns == 0 && j.Attempt == 1 && len(order) == 1:
					return sched.Snooze(time.Millisecond)
				case j.Key == "b":
					<-release
				}
				return nil
			},
		})
		x := must.Add(t, q, "x")
		must.Add(t, q, "b") // one batch: x, then b
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer func() {
			select {
			case <-release:
			default:
				close(release)
			}
			if err := s.Stop(ctx); err != nil {
				t.Error(err)
			}
		}()
		synctest.Wait() // x snoozed, b runs
		time.Sleep(10 * time.Millisecond)
		synctest.Wait() // x is due: pending
		if e, _ := q.Get(ctx, x); e.State != sched.StatePending && e.State != sched.StateSucceeded {
			t.Fatalf("x is %v, want pending (or run again by the idle worker)", e.State)
		}
		must.Add(t, q, "y") // pending after x
		synctest.Wait()
		mu.Lock()
		got := slices.Clone(order)
		mu.Unlock()
		close(release)
		synctest.Wait()
		mu.Lock()
		all := slices.Clone(order)
		mu.Unlock()
		if want := []string{"x", "b", "x", "y"}; !slices.Equal(got, want) {
			t.Errorf("runs while b's batch runs = %v (x pending, a worker idle); all runs %v: want x's second run before y's", got, all)
		}
	})
}

// The same for an entry made pending by an operator while its batch runs:
// a Retry of an entry that succeeded earlier in the batch, and an Enable of
// one disabled during its run (it reran when disabled). An idle worker runs
// it again while the batch's last entry still runs.
func TestAnEntryMadePendingWhileItsBatchRunsRunsAtOnce(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"Retry", "Enable"} {
		t.Run(how, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				s := newScheduler(t, sched.Config{Workers: 2, Logger: quiet})
				release, inA := make(chan struct{}), make(chan struct{})
				defer close(release)
				var runs atomic.Int32
				q := must.Queue(t, s, "q", sched.QueueConfig[string, string]{
					BatchSize: 2,
					Handler: func(_ context.Context, j *sched.Job[string, string]) error {
						switch {
						case j.Key == "b":
							<-release
						case runs.Add(1) == 1 && how == "Enable":
							inA <- struct{}{} // the test disables a now
							<-inA
							return sched.Rerun(errors.New("again"))
						}
						return nil
					},
				})
				q.Pause()
				a := must.Add(t, q, "a")
				must.Add(t, q, "b") // one batch: a, then b
				q.Resume()
				if how == "Enable" {
					<-inA
					if err := q.Disable(ctx, a); err != nil {
						t.Fatal(err)
					}
					inA <- struct{}{}
				}
				synctest.Wait() // a's run ended, b runs
				var err error
				if how == "Retry" {
					err = s.Inspector().RetryID(ctx, "q", a, false)
				} else {
					err = q.Enable(ctx, a)
				}
				if err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				if n := runs.Load(); n != 2 {
					t.Errorf("a ran %d times while b's batch runs, want 2: the idle worker runs it again", n)
				}
			})
		})
	}
}
