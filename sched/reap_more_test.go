package sched_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// Reap of an Inspector not made by Scheduler.Inspector is an error
// wrapping ErrInvalid, and with a nil context too: it renews and rescues
// nothing. (From mutation testing: kills dropping Reap's check, whose later check in
// queues comes after the scheduler's live batches are read.)
func TestReapOfAnInspectorNotMadeIsAnError(t *testing.T) {
	t.Parallel()
	for name, i := range map[string]*sched.Inspector{"nil": nil, "zero": {}} {
		func() {
			defer func() {
				if v := recover(); v != nil {
					t.Errorf("Reap of a %s Inspector panicked: %v", name, v)
				}
			}()
			if _, err := i.Reap(context.Background(), time.Now(), 0); !errors.Is(err, sched.ErrInvalid) {
				t.Errorf("Reap of a %s Inspector = %v, want ErrInvalid", name, err)
			}
		}()
	}
	s := must.New(t, sched.Config{Logger: quiet})
	//lint:ignore SA1012 the nil context is the bad input under test
	if _, err := s.Inspector().Reap(nil, time.Now(), 0); !errors.Is(err, sched.ErrInvalid) {
		t.Errorf("Reap with a nil context = %v, want ErrInvalid", err)
	}
}
