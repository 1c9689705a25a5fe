package sched_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/scope"
)

// Memory's methods return ErrInvalid for a nil context, and its
// management methods the error of a done one; the scheduler's calls go on
// under a done context (the Backend contract: a run is settled under the
// context StopAndCancel cancels). Before, List, and Delete and Retry
// through it, dereferenced a nil context, and the rest ignored it.
func TestMemoryRefusesANilContext(t *testing.T) {
	t.Parallel()
	newM := func() *sched.Memory[int, int] {
		m := sched.NewMemory[int, int]()
		if err := m.Open(sched.QueueInfo{Name: "m", Retention: sched.DefaultRetention}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := m.Add(context.Background(), sched.NewEntry[int, int]{Key: 1, Priority: 1, Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
		return m
	}
	now := time.Now()
	claim := sched.Claim[int, int]{ID: 1}
	type call = func(*sched.Memory[int, int], context.Context) error
	management := map[string]call{
		"Get":    func(m *sched.Memory[int, int], ctx context.Context) error { _, err := m.Get(ctx, 1); return err },
		"Counts": func(m *sched.Memory[int, int], ctx context.Context) error { _, err := m.Counts(ctx); return err },
		"List": func(m *sched.Memory[int, int], ctx context.Context) error {
			for _, err := range m.List(ctx, sched.Filter[int, int]{}) {
				if err != nil {
					return err
				}
			}
			return nil
		},
		"Delete": func(m *sched.Memory[int, int], ctx context.Context) error {
			_, err := m.Delete(ctx, sched.Filter[int, int]{})
			return err
		},
		"Retry": func(m *sched.Memory[int, int], ctx context.Context) error {
			_, err := m.Retry(ctx, sched.Filter[int, int]{}, false, time.Now())
			return err
		},
		"SetDisabled": func(m *sched.Memory[int, int], ctx context.Context) error { return m.SetDisabled(ctx, 1, true) },
	}
	scheduler := map[string]call{
		"Add": func(m *sched.Memory[int, int], ctx context.Context) error {
			_, _, err := m.Add(ctx, sched.NewEntry[int, int]{Key: 2, Priority: 1, Now: now})
			return err
		},
		"Take": func(m *sched.Memory[int, int], ctx context.Context) error {
			_, err := m.Take(ctx, scope.New(), sched.TakeRequest{Now: now, Max: 1}, nil)
			return err
		},
		"Start": func(m *sched.Memory[int, int], ctx context.Context) error {
			return ignoreStale(m.Start(ctx, &claim, now, time.Time{}))
		},
		"Settle": func(m *sched.Memory[int, int], ctx context.Context) error {
			return ignoreStale(m.Settle(ctx, &claim, sched.Outcome{Kind: sched.OutcomeSucceeded, Finished: now}))
		},
		"Renew": func(m *sched.Memory[int, int], ctx context.Context) error {
			return ignoreStale(m.Renew(ctx, 1, 0, now))
		},
		"Progress": func(m *sched.Memory[int, int], ctx context.Context) error {
			return ignoreStale(m.Progress(ctx, 1, 0, sched.Progress{}))
		},
		"Promote": func(m *sched.Memory[int, int], ctx context.Context) error {
			_, _, err := m.Promote(ctx, now)
			return err
		},
		"Expire": func(m *sched.Memory[int, int], ctx context.Context) error {
			_, _, err := m.Expire(ctx, now)
			return err
		},
		"Expired": func(m *sched.Memory[int, int], ctx context.Context) error {
			_, err := m.Expired(ctx, now, nil)
			return err
		},
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	run := func(f call, ctx context.Context) (err error) {
		defer func() {
			if v := recover(); v != nil {
				err = fmt.Errorf("panic: %v", v)
			}
		}()
		return f(newM(), ctx)
	}
	for name, f := range management {
		if err := run(f, nil); !errors.Is(err, sched.ErrInvalid) {
			t.Errorf("%s with a nil context: %v, want ErrInvalid", name, err)
		}
		if err := run(f, done); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a done context: %v, want context.Canceled", name, err)
		}
	}
	for name, f := range scheduler {
		if err := run(f, nil); !errors.Is(err, sched.ErrInvalid) {
			t.Errorf("%s with a nil context: %v, want ErrInvalid", name, err)
		}
		if err := run(f, done); err != nil {
			t.Errorf("%s with a done context: %v, want it to go on", name, err)
		}
	}
}

// ignoreStale is err, but nil for ErrStale and ErrNotFound: the claim of
// TestMemoryRefusesANilContext is not a current run.
func ignoreStale(err error) error {
	if errors.Is(err, sched.ErrStale) || errors.Is(err, sched.ErrNotFound) {
		return nil
	}
	return err
}
