package cron_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/cron"
	"github.com/jobkit/jobkit/recovery"
	"github.com/jobkit/jobkit/sched"
)

// On a shared scheduler with a recovery reaper, a run longer than sched's
// default lease (5 minutes) runs to its end: the engine's queue renews
// its leases, since a Func has no Job to heartbeat with. Before, every
// such run had its context cancelled with sched.ErrRescued at about 5
// minutes (and the fourth rescue counted the entry as poisoned): a
// ten-minute backup could never finish.
func TestALongRunIsNotRescuedByAReaper(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
		s, err := sched.New(sched.Config{Workers: 2, Logger: quiet})
		must(t, err)
		r, err := recovery.New(s, recovery.Config{Interval: time.Second, Logger: quiet})
		must(t, err)
		must(t, s.Start(ctx))
		must(t, r.Start(ctx))
		e, err := cron.New(cron.Config{Scheduler: s, Logger: quiet})
		must(t, err)
		must(t, e.Start(ctx))

		var mu sync.Mutex
		var causes []error
		done := make(chan struct{}, 16)
		backup := func(ctx context.Context, _ time.Time) error {
			select {
			case <-ctx.Done():
				mu.Lock()
				causes = append(causes, context.Cause(ctx))
				mu.Unlock()
			case <-time.After(10 * time.Minute): // a ten-minute backup
			}
			done <- struct{}{}
			return nil
		}
		must(t, e.RegisterSpec(ctx, "backup", "0 * * * *", backup, cron.WithLocation(time.UTC)))
		for range 4 { // four hourly runs
			select {
			case <-done:
			case <-time.After(2 * time.Hour):
				t.Fatal("no run")
			}
		}
		mu.Lock()
		if len(causes) > 0 {
			t.Errorf("%d of 4 runs of a 10-minute cron job had their context cancelled (cause %v, ErrRescued %v)",
				len(causes), causes[0], errors.Is(causes[0], sched.ErrRescued))
		}
		mu.Unlock()
		if st := r.Stats(); st.Rescued != 0 || st.Poisoned != 0 {
			t.Errorf("reaper stats %+v, want nothing rescued", st)
		}
		must(t, e.Stop(ctx))
		must(t, r.Stop(ctx))
		must(t, s.Stop(ctx))
	})
}
