package sched_test

import (
	"context"
	"testing"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// promoteFails is a backend whose Promote returns an error.
type promoteFails struct{ sched.Backend[int, int] }

func (promoteFails) Promote(context.Context, time.Time) (time.Time, bool, error) {
	return time.Time{}, false, errDown
}

// Config.Logger: "one that hangs holds that goroutine, and no lock". A
// Logger that hangs as the timekeeper warns of a failed Promote holds the
// timekeeper, and not the queue's due time: an add of a delayed entry
// still returns. Before, the warning was logged under the lock of the
// due time, which every delayed add (and every settlement of a retry or a
// snooze, under its batch's lock) takes, and the add waited for ever.
// (Real time: a goroutine blocked on a mutex is not durably blocked.)
func TestAHangingLoggerWarningOfAFailedPromoteHoldsNoAdd(t *testing.T) {
	t.Parallel()
	log, entered, release := firstRecordHangs() // the first record hangs until the end; the rest pass
	defer release()
	s := newScheduler(t, sched.Config{Workers: 1, Logger: log})
	q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Backend: promoteFails{sched.NewMemory[int, int]()}, Handler: nop[int, int]})
	must.Add(t, q, 1, sched.After(time.Millisecond))
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("no warning of the failed Promote")
	}
	added := make(chan error, 1)
	go func() {
		_, _, err := q.Add(context.Background(), 2, sched.After(time.Hour))
		added <- err
	}()
	select {
	case err := <-added:
		if err != nil {
			t.Errorf("Add = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a delayed Add did not return in 10 s while the Logger hung on the timekeeper's warning")
	}
}
