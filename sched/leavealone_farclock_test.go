package sched_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
	"github.com/jobkit/jobkit/scope"
)

// failingTakes is a backend whose Take always fails, counting its calls.
type failingTakes struct {
	sched.Backend[int, int]
	takes atomic.Int64
}

func (f *failingTakes) Take(context.Context, *scope.Scope, sched.TakeRequest, []sched.Claim[int, int]) ([]sched.Claim[int, int], error) {
	f.takes.Add(1)
	return nil, errors.New("backend down")
}

// A queue whose backend fails is left alone for a second also once the
// Clock has moved past the instants the scheduler holds (as a test's Clock
// that jumps does): its Take is called about once a second, not in a hot
// loop.
func TestAFailingBackendIsLeftAloneOnceTheClockIsPastTheScheduledRange(t *testing.T) {
	t.Parallel()
	clock := new(jumpingClock)
	s := must.New(t, sched.Config{Workers: 1, Loops: 1, Logger: quiet, Clock: clock})
	b := &failingTakes{Backend: sched.NewMemory[int, int]()}
	q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Backend: b, Handler: nop[int, int]})
	start(t, s, nil)
	clock.jumps.Store(1) // 200 years on
	must.Add(t, q, 0)
	<-time.After(300 * time.Millisecond) // a span to count the calls in
	if n := b.takes.Load(); n > 3 {
		t.Errorf("%d Takes in 300 ms of a backend whose Take fails, want about one a second", n)
	}
}
