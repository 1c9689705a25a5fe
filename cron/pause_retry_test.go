package cron_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/cron"
	"github.com/jobkit/jobkit/sched"
)

// WithRetry: "Update, Pause and Resume drop a waiting retry". A retry that
// waits when the job is paused is gone at once: Job reports none.
func TestPauseDropsAWaitingRetry(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sleepUntil(at(0, 0).Add(30 * time.Second))
		e := startEngine(t, cron.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		fail := func(context.Context, time.Time) error { return errors.New("fail") }
		must(t, e.RegisterSpec(ctx, "j", "0 * * * *", fail,
			cron.WithLocation(time.UTC), cron.WithRetry(sched.RetryPolicy{MaxRetries: 2, Base: 10 * time.Minute})))
		sleepUntil(at(1, 1))
		if info, _ := e.Job("j"); !info.RetryAt.Equal(at(1, 10)) {
			t.Fatalf("before Pause: RetryAt = %v, want 01:10", info.RetryAt)
		}
		must(t, e.Pause(ctx, "j"))
		if info, _ := e.Job("j"); !info.RetryAt.IsZero() {
			t.Errorf("after Pause: RetryAt = %v, want none (dropped)", info.RetryAt)
		}
	})
}
