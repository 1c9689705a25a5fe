package recovery_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/recovery"
	"github.com/jobkit/jobkit/sched"
)

// Two looks at once (the reaper's and a Look of the user's) raise one
// TakenTooOften alert for an entry's run, as one look does. Look A lists
// the queue before entry e runs again and is held, in its OnAlert for
// another entry f, while e starts its second run; Look B sees that run and
// alerts; then A ends, and must not forget the alert that B raised after
// A's listing began: a third look (C) would raise it again.
func TestConcurrentLooksAlertOnce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testConcurrentLooksAlertOnce)
}

func testConcurrentLooksAlertOnce(t *testing.T) {
	ctx := context.Background()
	s, err := sched.New(sched.Config{Workers: 2, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		alerts   []recovery.Alert
		holdA    = make(chan struct{}) // closed: OnAlert for f holds its look until release
		aHeld    = make(chan struct{})
		release  = make(chan struct{})
		running  = make(chan string, 2) // a payload's second run started
		finish   = make(chan struct{})  // the second runs may return
		holdOnce sync.Once
	)
	var fID sched.ID
	r, err := recovery.New(s, recovery.Config{
		Interval: time.Hour, TakenThreshold: 1, StallThreshold: -1, Logger: quiet,
		OnAlert: func(a recovery.Alert) {
			mu.Lock()
			alerts = append(alerts, a)
			mu.Unlock()
			select {
			case <-holdA:
				if a.ID == fID {
					holdOnce.Do(func() { close(aHeld); <-release })
				}
			default:
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	q, err := sched.NewQueue(s, "q", sched.QueueConfig[string, string]{
		Handler: func(ctx context.Context, j *sched.Job[string, string]) error {
			if j.Attempt == 1 {
				return errors.New("again") // retried: f at once, e an hour later
			}
			running <- j.Payload
			<-finish
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		close(finish)
		if err := s.Stop(ctx); err != nil {
			t.Error(err)
		}
	}()
	// e first (the lower ID, listed first), then f.
	eID, _, err := q.Add(ctx, "e", sched.WithRetry(sched.RetryPolicy{MaxRetries: 1, Base: time.Hour}))
	if err != nil {
		t.Fatal(err)
	}
	if fID, _, err = q.Add(ctx, "f", sched.WithRetry(sched.RetryPolicy{MaxRetries: 1, Base: time.Nanosecond})); err != nil {
		t.Fatal(err)
	}
	if p := <-running; p != "f" {
		t.Fatalf("%s ran again first, want f", p)
	}

	// Look A: e is delayed, f running its second run: A alerts for f and
	// is held there, its listing past e.
	close(holdA)
	aDone := make(chan struct{})
	go func() { defer close(aDone); r.Look(ctx) }()
	<-aHeld
	// e runs again once its hour of backoff has passed (the bubble's
	// clock moves on while every goroutine waits).
	time.Sleep(time.Hour)
	if p := <-running; p != "e" {
		t.Fatalf("%s ran again, want e", p)
	}
	r.Look(ctx) // B: alerts for e
	close(release)
	<-aDone
	r.Look(ctx) // C: e and f still run their second runs, both alerted

	mu.Lock()
	defer mu.Unlock()
	count := map[sched.ID]int{}
	for _, a := range alerts {
		if a.Kind == recovery.TakenTooOften {
			count[a.ID]++
		}
	}
	if count[eID] != 1 || count[fID] != 1 {
		t.Errorf("TakenTooOften alerts: %d for e, %d for f; want one each (all alerts: %v)", count[eID], count[fID], alerts)
	}
}

// An OnAlert that calls Look (a look from within a look's alert) does not
// wait for the look that called it: the listing it needs is not held while
// the alerts are raised.
func TestLookFromOnAlert(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, err := sched.New(sched.Config{Workers: 1, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		var r *recovery.Reaper
		inner := 0
		r, err = recovery.New(s, recovery.Config{
			Interval: time.Hour, TakenThreshold: 1, StallThreshold: -1, Logger: quiet,
			OnAlert: func(a recovery.Alert) {
				inner++
				r.Look(ctx) // sees the same run: alerted already, no alert again
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		finish := make(chan struct{})
		q, err := sched.NewQueue(s, "q", sched.QueueConfig[int, int]{
			Retry: &sched.RetryPolicy{MaxRetries: 1, Base: time.Nanosecond},
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				if j.Attempt == 1 {
					return errors.New("again")
				}
				<-finish
				return nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if _, _, err := q.Add(ctx, 1); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second) // its retry comes due
		synctest.Wait()         // and its second run is in progress
		r.Look(ctx)
		if inner != 1 {
			t.Errorf("OnAlert called %d times, want once", inner)
		}
		close(finish)
		if err := s.Stop(ctx); err != nil {
			t.Error(err)
		}
	})
}
