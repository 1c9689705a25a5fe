package sched_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// failingCalls is a backend whose method in (Start, Settle or Renew)
// returns an error of its own, as a database that is down would: the
// scheduler logs it as a warning.
type failingCalls struct {
	sched.Backend[int, int]
	in string
}

var errDown = errors.New("the database is down")

func (b *failingCalls) Start(ctx context.Context, c *sched.Claim[int, int], now, lease time.Time) error {
	if b.in == "Start" {
		return errDown
	}
	return b.Backend.Start(ctx, c, now, lease)
}

func (b *failingCalls) Settle(ctx context.Context, c *sched.Claim[int, int], o sched.Outcome) error {
	if b.in == "Settle" {
		return errDown
	}
	return b.Backend.Settle(ctx, c, o)
}

func (b *failingCalls) Renew(ctx context.Context, id sched.ID, gen uint64, until time.Time) error {
	if b.in == "Renew" {
		return errDown
	}
	return b.Backend.Renew(ctx, id, gen, until)
}

// Config.Logger: "one that hangs holds that goroutine, and no lock". A
// Logger that hangs as the scheduler warns of a backend's failed Start or
// Settle (on the worker) or Renew (on the reaper, which auto-renews) holds
// that goroutine, and not the batch's lock: StopAndCancel still returns
// when its context ends. Before, the warning was logged under the batch's
// lock, and StopAndCancel, abandoning the batch, waited for the lock for
// ever. (Real time, as in hangingdelay_test.go.)
func TestAHangingLoggerWarningOfAFailedCallLetsStopAndCancelReturn(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"Start", "Settle", "Renew"} {
		t.Run(in, func(t *testing.T) {
			t.Parallel()
			log, entered, release := firstRecordHangs() // the first record hangs until the end; the rest pass
			defer release()
			s := must.New(t, sched.Config{Workers: 1, Logger: log})
			running, hold := make(chan struct{}, 1), make(chan struct{})
			defer close(hold)
			cfg := sched.QueueConfig[int, int]{Backend: &failingCalls{sched.NewMemory[int, int](), in}, Handler: nop[int, int]}
			if in == "Renew" {
				s.Inspector().EnableRescue()
				cfg.AutoRenew = true
				cfg.Handler = func(ctx context.Context, _ *sched.Job[int, int]) error {
					running <- struct{}{}
					<-hold // until the end: a hung handler
					return nil
				}
			}
			q := must.Queue(t, s, "q", cfg)
			if err := s.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			must.Add(t, q, 1)
			if in == "Renew" {
				<-running
				go func() { _, _ = s.Inspector().Reap(context.Background(), time.Now(), 0) }()
			}
			select {
			case <-entered:
			case <-time.After(10 * time.Second):
				t.Fatalf("no warning of the failed %s", in)
			}
			if err := stopAndCancelSoon(t, s); err != nil && !errors.Is(err, sched.ErrAbandoned) {
				t.Errorf("StopAndCancel = %v, want nil or ErrAbandoned", err)
			}
		})
	}
}
