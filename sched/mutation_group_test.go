package sched_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// A group's entries run in the order they were added, and one put back by
// a Rerun goes back to its place among them, ahead of entries of the
// group added later: with batches of one, entry 1 rerun while 2 and 3
// wait runs again before them. (From mutation testing: makeTakeable
// appending an entry to its group's pending entries, instead of inserting
// it in ID order, survived every test; the property test checks the order
// of runs only without groups.)
func TestARerunEntryKeepsItsPlaceInItsGroup(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
		release := make(chan struct{})
		var (
			mu    sync.Mutex
			order []int
		)
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Group:     func(int) string { return "g" },
			BatchSize: 1,
			Handler: func(_ context.Context, j *sched.Job[int, int]) error {
				mu.Lock()
				order = append(order, j.Key)
				mu.Unlock()
				if j.Key == 1 && j.Reruns == 0 {
					<-release
					return sched.Rerun(errors.New("cut short"))
				}
				return nil
			},
		})
		must.Add(t, q, 1)
		synctest.Wait() // 1 runs, its group busy
		must.Add(t, q, 2)
		must.Add(t, q, 3)
		synctest.Wait()
		close(release)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if want := []int{1, 1, 2, 3}; !slices.Equal(order, want) {
			t.Errorf("runs %v, want %v: the rerun entry lost its place in its group", order, want)
		}
	})
}
