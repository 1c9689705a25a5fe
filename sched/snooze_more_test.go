package sched_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// recordSnoozes is a backend that keeps the outcomes of the snoozes it
// settles.
type recordSnoozes struct {
	sched.Backend[int, int]
	mu      sync.Mutex
	snoozes []sched.Outcome
}

func (b *recordSnoozes) Settle(ctx context.Context, c *sched.Claim[int, int], o sched.Outcome) error {
	if o.Kind == sched.OutcomeSnooze {
		b.mu.Lock()
		b.snoozes = append(b.snoozes, o)
		b.mu.Unlock()
	}
	return b.Backend.Settle(ctx, c, o)
}

// A SnoozeError built by hand with a negative After snoozes until the run
// ended, as Snooze of a negative duration does: not until a time before
// the run ended, which the backend would be told. (From mutation testing: kills dropping
// the clamp of After in SnoozeError.at.)
func TestAHandBuiltSnoozeOfANegativeAfterIsUntilTheEnd(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
		b := &recordSnoozes{Backend: sched.NewMemory[int, int]()}
		runs := 0
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Backend: b,
			Handler: func(context.Context, *sched.Job[int, int]) error {
				if runs++; runs == 1 {
					return &sched.SnoozeError{After: -time.Hour}
				}
				return nil
			},
		})
		must.Add(t, q, 1)
		time.Sleep(time.Minute)
		synctest.Wait()
		b.mu.Lock()
		defer b.mu.Unlock()
		if runs != 2 || len(b.snoozes) != 1 {
			t.Fatalf("%d runs, %d snoozes; want 2 runs, 1 snooze", runs, len(b.snoozes))
		}
		if o := b.snoozes[0]; !o.At.Equal(o.Finished) {
			t.Errorf("snoozed until %v, the run ended at %v; want until the end", o.At, o.Finished)
		}
	})
}
