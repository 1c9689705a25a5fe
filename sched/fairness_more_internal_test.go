package sched

import (
	"math"
	"testing"
	"time"
)

// The fairness arithmetic stays in range for runs of decades (a Clock that
// jumps): a batch's estimate saturates instead of wrapping to a negative
// charge, which would lower the pass of the queue that used the most, and
// the moving average of a run stays between the old average and the new
// run. (From mutation testing: kills dropping estimate's saturation and going back to
// charge's 4·avgRun.)
func TestFairnessOfRunsOfDecades(t *testing.T) {
	t.Parallel()
	const decades = 80 * 365 * 24 * time.Hour
	q := &queueBase{batch: 8, priority: 1, avgRun: decades}
	if e := q.estimate(); e != math.MaxInt64 {
		t.Errorf("estimate of a batch of 8 runs of 80 years = %v, want the longest Duration", e)
	}
	var s Scheduler
	s.charge(q, 0, decades, 1)
	if q.avgRun != decades {
		t.Errorf("after another run of 80 years, the average run is %v, want 80 years (%v)", q.avgRun, time.Duration(decades))
	}
	if q.pass <= 0 {
		t.Errorf("pass %v after a batch that used 80 years, want it raised", q.pass)
	}
}
