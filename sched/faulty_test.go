package sched_test

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
	"github.com/jobkit/jobkit/scope"
)

// faulty is a backend that panics in its first Takes and Promotes.
type faulty struct {
	sched.Backend[int, int]
	takes, promotes atomic.Int64
}

func (f *faulty) Take(ctx context.Context, s *scope.Scope, r sched.TakeRequest, dst []sched.Claim[int, int]) ([]sched.Claim[int, int], error) {
	if f.takes.Add(1) <= 2 {
		panic("backend bug in Take")
	}
	return f.Backend.Take(ctx, s, r, dst)
}

func (f *faulty) Promote(ctx context.Context, now time.Time) (time.Time, bool, error) {
	if f.promotes.Add(1) <= 2 {
		panic("backend bug in Promote")
	}
	return f.Backend.Promote(ctx, now)
}

// A backend that panics in a loop's take or the timekeeper's promotion does
// not end the process: the panic is logged, the queue is skipped for a
// second, and its jobs run afterwards.
func TestPanickingBackendIsContained(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 2, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		var runs atomic.Int64
		b := &faulty{Backend: sched.NewMemory[int, int]()}
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Backend: b, Handler: func(context.Context, *sched.Job[int, int]) error {
			runs.Add(1)
			return nil
		}})
		must.Add(t, q, 1)
		must.Add(t, q, 2, sched.After(time.Second))
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if runs.Load() != 2 || b.takes.Load() < 3 || b.promotes.Load() < 3 {
			t.Errorf("%d runs after %d takes and %d promotions, want both jobs run once the backend recovers", runs.Load(), b.takes.Load(), b.promotes.Load())
		}
	})
}
