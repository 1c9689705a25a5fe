package sched_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
	"github.com/jobkit/jobkit/scope"
)

// openMemory returns a Memory opened as queue "q" with the default
// retention.
func openMemory(t *testing.T, info sched.QueueInfo) *sched.Memory[int, int] {
	t.Helper()
	m := sched.NewMemory[int, int]()
	info.Name = "q"
	if info.Retention == (sched.Retention{}) {
		info.Retention = sched.DefaultRetention
	}
	if err := m.Open(info); err != nil {
		t.Fatal(err)
	}
	return m
}

// takeN takes up to max entries from m at now, under a scope that the
// test closes when it ends if the caller does not.
func takeN(t *testing.T, m *sched.Memory[int, int], now time.Time, max int) ([]sched.Claim[int, int], *scope.Scope) {
	t.Helper()
	s := scope.New()
	t.Cleanup(func() { _ = s.Close(scope.Succeeded()) })
	cs, err := m.Take(context.Background(), s, sched.TakeRequest{Now: now, Max: max}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs, s
}

// An entry retried by an operator whose clock reads earlier than the
// entry's finish (a Clock that went back) is ready no earlier than its
// run ended. (From mutation testing: Memory.Retry taking the Retry's time
// alone as ReadyAt survived every test.)
func TestARetryOnAClockGoneBackIsReadyNoEarlierThanTheFinish(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := openMemory(t, sched.QueueInfo{})
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, _, err := m.Add(ctx, sched.NewEntry[int, int]{Key: 1, Payload: 1, Priority: 1, Now: t0}); err != nil {
		t.Fatal(err)
	}
	cs, s := takeN(t, m, t0, 1)
	if len(cs) != 1 {
		t.Fatalf("took %d claims, want 1", len(cs))
	}
	if err := m.Start(ctx, &cs[0], t0, time.Time{}); err != nil {
		t.Fatal(err)
	}
	fin := t0.Add(10 * time.Second)
	if err := m.Settle(ctx, &cs[0], sched.Outcome{Kind: sched.OutcomeFailed, Finished: fin}); err != nil {
		t.Fatal(err)
	}
	_ = s.Close(scope.Succeeded())
	if n, err := m.Retry(ctx, sched.Filter[int, int]{}, false, t0.Add(5*time.Second)); n != 1 || err != nil {
		t.Fatalf("Retry = %d, %v; want 1", n, err)
	}
	cs, _ = takeN(t, m, t0.Add(6*time.Second), 1)
	if len(cs) != 1 {
		t.Fatalf("took %d claims after the Retry, want 1", len(cs))
	}
	if !cs[0].ReadyAt.Equal(fin) {
		t.Errorf("retried entry ready at %v, want %v: the Retry's clock read before its run ended", cs[0].ReadyAt, fin)
	}
}

// A run starts with no progress: what the entry's previous run reported
// is not shown as the new run's. (From mutation testing: Memory.Start
// keeping the previous run's progress survived every test.)
func TestARunStartsWithNoProgress(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
		release := make(chan struct{})
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Retry: &sched.RetryPolicy{MaxRetries: 1, Base: time.Second},
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				if j.Attempt == 1 {
					if err := j.Progress(ctx, sched.Progress{Done: 5, Total: 10, Note: "half"}); err != nil {
						return err
					}
					return errors.New("fails once")
				}
				<-release
				return nil
			},
		})
		id := must.Add(t, q, 1)
		synctest.Wait()
		time.Sleep(time.Second) // the retry starts
		synctest.Wait()
		e, err := q.Get(ctx, id)
		close(release)
		if err != nil || e.State != sched.StateRunning || e.Progress != (sched.Progress{}) {
			t.Errorf("second run: %v with progress %+v (%v); want running with no progress", e.State, e.Progress, err)
		}
	})
}

// An entry keeps its last MaxErrors run errors, the oldest dropped first.
// (From mutation testing: keeping one more than MaxErrors survived every
// test.)
func TestAnEntryKeepsItsLastMaxErrorsErrors(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
		const runs = sched.MaxErrors + 2
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Retry: &sched.RetryPolicy{MaxRetries: runs - 1, Base: time.Millisecond, MaxDelay: time.Millisecond},
			Handler: func(context.Context, *sched.Job[int, int]) error {
				return errors.New("fails")
			},
		})
		id := must.Add(t, q, 1)
		time.Sleep(time.Minute)
		synctest.Wait()
		e, err := q.Get(ctx, id)
		if err != nil || e.State != sched.StateFailed || e.Attempts != runs {
			t.Fatalf("entry %v after %d attempts (%v), want failed after %d", e.State, e.Attempts, err, runs)
		}
		if len(e.Errors) != sched.MaxErrors || e.Errors[0].Attempt != runs-sched.MaxErrors+1 || e.Errors[len(e.Errors)-1].Attempt != runs {
			var at []int
			for _, re := range e.Errors {
				at = append(at, re.Attempt)
			}
			t.Errorf("errors of attempts %v, want the last %d: %d to %d", at, sched.MaxErrors, runs-sched.MaxErrors+1, runs)
		}
	})
}
