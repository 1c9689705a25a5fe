package sched_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
	"github.com/jobkit/jobkit/scope"
)

// failingPromote is Memory whose Promote always fails (a durable backend
// whose database is down). Its 100th call closes hot and waits for
// release, so that a hot loop lets a synctest bubble's time go on.
type failingPromote struct {
	*sched.Memory[int, int]
	calls        atomic.Int32
	hot, release chan struct{}
}

func (b *failingPromote) Promote(ctx context.Context, now time.Time) (time.Time, bool, error) {
	if b.calls.Add(1) == 100 {
		close(b.hot)
		<-b.release
	}
	return time.Time{}, false, errors.New("database down")
}

// A backend's Promote that keeps failing is tried again about once a
// second, not in a hot loop. (promote kept the due time, which had passed,
// and the timekeeper armed its timer for no time at all, again and again.)
func TestAFailingPromoteIsTriedOnceASecond(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
		b := &failingPromote{Memory: sched.NewMemory[int, int](), hot: make(chan struct{}), release: make(chan struct{})}
		var once sync.Once
		t.Cleanup(func() { once.Do(func() { close(b.release) }) }) // before the scheduler's Stop
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Backend: b, Handler: nop[int, int]})
		must.Add(t, q, 1, sched.After(time.Millisecond))
		time.Sleep(10 * time.Second)
		if n := b.calls.Load(); n > 15 {
			t.Errorf("Promote called %d times in 10 s, want about once a second", n)
		}
		once.Do(func() { close(b.release) })
	})
}

// flakyTake is Memory whose first Take fails, taking nothing: a durable
// backend's timeout, say.
type flakyTake struct {
	*sched.Memory[int, int]
	calls atomic.Int32
}

func (b *flakyTake) Take(ctx context.Context, s *scope.Scope, r sched.TakeRequest, dst []sched.Claim[int, int]) ([]sched.Claim[int, int], error) {
	if b.calls.Add(1) == 1 {
		return dst, errors.New("transient: connection reset")
	}
	return b.Memory.Take(ctx, s, r, dst)
}

// After a Take that failed, the queue's pending entries are taken a second
// later. (The loop took the failure for "nothing left to take", and nothing
// looked at the queue again until another add.)
func TestAFailedTakeIsTriedAgainASecondLater(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
		var runs atomic.Int32
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Backend: &flakyTake{Memory: sched.NewMemory[int, int]()},
			Handler: func(context.Context, *sched.Job[int, int]) error { runs.Add(1); return nil },
		})
		must.Add(t, q, 1)
		synctest.Wait()
		if n := runs.Load(); n != 0 {
			t.Fatalf("%d runs after the failed Take, want none yet", n)
		}
		time.Sleep(time.Second + time.Millisecond)
		synctest.Wait()
		if n := runs.Load(); n != 1 {
			t.Errorf("%d runs a second after the failed Take, want 1", n)
		}
	})
}
