package sched_test

import (
	"context"
	"log/slog"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// exitingJobBackend is sched's in-memory backend whose Renew and Progress
// end the calling goroutine (runtime.Goexit) while exits is positive.
type exitingJobBackend struct {
	sched.Backend[int, int]
	exits *atomic.Int32
}

func (b exitingJobBackend) exit() {
	if b.exits.Add(-1) >= 0 {
		runtime.Goexit()
	}
}

func (b exitingJobBackend) Renew(ctx context.Context, id sched.ID, gen uint64, until time.Time) error {
	b.exit()
	return b.Backend.Renew(ctx, id, gen, until)
}

func (b exitingJobBackend) Progress(ctx context.Context, id sched.ID, gen uint64, p sched.Progress) error {
	b.exit()
	return b.Backend.Progress(ctx, id, gen, p)
}

// A backend's Renew or Progress that ends the goroutine of a handler's
// Heartbeat or Progress is a dependency's exit, as the package doc says
// ("the running entry runs again"): the entry runs again without spending
// an attempt. Before, the run was taken for one whose handler called
// runtime.Goexit: it failed, an attempt spent (here, with NoRetry, for
// good), with the backend's fault for the handler's.
func TestABackendGoexitInAJobsCallRunsTheEntryAgain(t *testing.T) {
	t.Parallel()
	for name, call := range map[string]func(context.Context, *sched.Job[int, int]) error{
		"Heartbeat": func(ctx context.Context, j *sched.Job[int, int]) error { return j.Heartbeat(ctx) },
		"Progress": func(ctx context.Context, j *sched.Job[int, int]) error {
			return j.Progress(ctx, sched.Progress{Done: 1})
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var logged atomic.Int32
				s := newScheduler(t, sched.Config{Workers: 1, Logger: slog.New(onRecord(func(slog.Record) { logged.Add(1) }))})
				var exits atomic.Int32
				exits.Store(1)
				ran := make(chan struct{}, 2)
				q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
					Backend: exitingJobBackend{sched.NewMemory[int, int](), &exits},
					Retry:   &sched.NoRetry,
					Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
						ran <- struct{}{}
						_ = call(ctx, j)
						return nil
					},
				})
				id := must.Add(t, q, 1)
				<-ran
				synctest.Wait()
				if x, err := q.Get(context.Background(), id); err != nil || x.State.Final() {
					t.Fatalf("after the backend ended the handler's goroutine: %v, %v, attempts %d, errors %+v; want it to run again",
						x.State, err, x.Attempts, x.Errors)
				}
				<-ran // run again, once the queue has been left alone
				synctest.Wait()
				x, err := q.Get(context.Background(), id)
				if err != nil || x.State != sched.StateSucceeded || x.Attempts != 1 || x.Reruns != 1 {
					t.Errorf("entry %v (%v), attempts %d, reruns %d, errors %+v; want succeeded in 1 attempt after 1 rerun",
						x.State, err, x.Attempts, x.Reruns, x.Errors)
				}
				if n := logged.Load(); n != 1 {
					t.Errorf("%d records logged, want 1: the backend's fault, once", n)
				}
			})
		})
	}
}

// The Goexit of a backend's call under a Job method on a goroutine of the
// handler's own ends only that goroutine: the handler's result stands.
func TestABackendGoexitInAJobsCallOnAHandlersGoroutineEndsOnlyThat(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
		var exits atomic.Int32
		exits.Store(1)
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Backend: exitingJobBackend{sched.NewMemory[int, int](), &exits},
			Retry:   &sched.NoRetry,
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				done := make(chan struct{})
				go func() {
					defer close(done)
					_ = j.Heartbeat(ctx)
				}()
				<-done
				return sched.Permanent(context.DeadlineExceeded)
			},
		})
		id := must.Add(t, q, 1)
		synctest.Wait()
		x, err := q.Get(context.Background(), id)
		if err != nil || x.State != sched.StateFailed || x.Reruns != 0 || len(x.Errors) != 1 || x.Errors[0].Type != "*sched.PermanentError" {
			t.Errorf("entry %v (%v), reruns %d, errors %+v; want failed with the handler's error", x.State, err, x.Reruns, x.Errors)
		}
	})
}
