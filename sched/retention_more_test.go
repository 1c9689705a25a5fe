package sched_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// An entry kept for ever is kept when the backend expires others: a
// failure kept for a minute expires, and the success kept for ever stays.
// (From mutation testing: kills Memory.Expire adding the retention to the finish without
// saturation; TestTimesPastTheNanosecondRangeStayFarOff never has Expire
// called after its entry kept for ever finished.)
func TestAnEntryKeptForEverOutlivesOthersExpiring(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Retention: &sched.Retention{
				Succeeded: time.Duration(math.MaxInt64), MaxSucceeded: 10,
				Failed: time.Minute, MaxFailed: 10,
			},
			Handler: func(_ context.Context, j *sched.Job[int, int]) error {
				if j.Payload == 2 {
					return sched.Permanent(errors.New("fails"))
				}
				return nil
			},
		})
		must.Add(t, q, 1)
		must.Add(t, q, 2)
		time.Sleep(time.Hour)
		synctest.Wait()
		if c := must.Counts(t, q); c.Succeeded != 1 || c.Failed != 0 || c.Expired != 1 {
			t.Errorf("counts %+v, want the success kept and the failure expired", c)
		}
	})
}
