package sched_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// Config says that nothing can be changed after New, and New validates
// Config.Retention. A queue registered later with the scheduler's default
// retention must get the retention New was given: not one the caller
// changed since, and never an invalid (negative) one that New would have
// refused.
func TestConfigRetentionIsCopiedAtNew(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := sched.Retention{Succeeded: time.Hour, MaxSucceeded: 10}
		s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet, Retention: &r})
		r.Succeeded = -time.Hour // after New: must change nothing
		r.MaxSucceeded = -1
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Handler: nop[int, int]})
		must.Add(t, q, 1)
		synctest.Wait()
		if c := must.Counts(t, q); c.Succeeded != 1 || c.Expired != 0 {
			t.Errorf("counts %+v: want the success kept for the hour New was given", c)
		}
	})
}
