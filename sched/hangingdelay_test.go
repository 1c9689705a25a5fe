package sched_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// A retry policy's Delay that hangs holds its worker, as a hung handler
// does, and nothing else: StopAndCancel still returns when its context
// ends, abandoning the run (which goes back to pending), and the worker's
// goroutine ends once the Delay returns. So it does for a handler that
// ends its goroutine (runtime.Goexit), whose run is classified on the
// worker's way out, before the batch's lock is taken (from mutation
// testing: this case kills classifying under the lock there). It runs in
// real time: a StopAndCancel blocked on the batch's lock is not durably
// blocked, so a synctest bubble would not move its clock.
func TestAHangingDelayLetsStopAndCancelReturn(t *testing.T) {
	t.Parallel()
	for name, handler := range map[string]func(context.Context, *sched.Job[int, int]) error{
		"the handler fails": func(context.Context, *sched.Job[int, int]) error { return errors.New("fails") },
		"the handler calls Goexit": func(context.Context, *sched.Job[int, int]) error {
			runtime.Goexit()
			return nil
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			entered, release := make(chan struct{}), make(chan struct{})
			defer close(release)
			s := must.New(t, sched.Config{Workers: 1, Logger: quiet})
			q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
				Retry: &sched.RetryPolicy{MaxRetries: 1, Delay: func(int, error) time.Duration {
					close(entered)
					<-release
					return time.Hour
				}},
				Handler: handler,
			})
			if err := s.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			must.Add(t, q, 1)
			select {
			case <-entered:
			case <-time.After(10 * time.Second):
				t.Fatal("the failed run was not classified as a retry")
			}
			if err := stopAndCancelSoon(t, s); !errors.Is(err, sched.ErrAbandoned) {
				t.Errorf("StopAndCancel = %v, want ErrAbandoned", err)
			}
			if c := must.Counts(t, q); c.Pending != 1 {
				t.Errorf("counts %+v, want the abandoned run back in pending", c)
			}
		})
	}
}

// settleExits is a backend whose Settle ends the goroutine
// (runtime.Goexit) after it is passed on.
type settleExits struct{ sched.Backend[int, int] }

func (b *settleExits) Settle(ctx context.Context, c *sched.Claim[int, int], o sched.Outcome) error {
	if err := b.Backend.Settle(ctx, c, o); err != nil {
		return err
	}
	runtime.Goexit()
	return nil
}

// A Logger that hangs as a worker logs a backend's fault holds that worker
// and no lock: StopAndCancel still returns when its context ends. (Real
// time, as above.)
func TestAHangingLoggerLetsStopAndCancelReturn(t *testing.T) {
	t.Parallel()
	log, entered, release := firstRecordHangs() // the first record hangs until the end; the rest pass
	defer release()
	s := must.New(t, sched.Config{Workers: 1, Logger: log})
	q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Backend: &settleExits{sched.NewMemory[int, int]()}, Handler: nop[int, int]})
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	must.Add(t, q, 1)
	<-entered
	stopAndCancelSoon(t, s)
}

// stopAndCancelSoon calls s.StopAndCancel with a context that ends in
// 100 ms and returns its error; the test fails if it has not returned
// 10 s after that.
func stopAndCancelSoon(t *testing.T, s *sched.Scheduler) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- s.StopAndCancel(ctx) }()
	select {
	case err := <-stopped:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("StopAndCancel did not return 10 s after its context ended")
		return nil
	}
}
