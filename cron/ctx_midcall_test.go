package cron_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/cron"
	"github.com/jobkit/jobkit/sched"
)

// lateCtx is a context whose deadline passes during the call it is given
// to: its first n calls of Err report nil, the following ones
// context.DeadlineExceeded (and Done is closed from then on). It is what a
// request-scoped context with a timeout looks like when the timeout falls
// between the engine's own check of ctx and its calls on the queue.
type lateCtx struct {
	context.Context
	mu   sync.Mutex
	n    int
	done chan struct{}
}

func newLateCtx(n int) *lateCtx {
	return &lateCtx{Context: context.Background(), n: n, done: make(chan struct{})}
}

func (c *lateCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n > 0 {
		c.n--
		return nil
	}
	select {
	case <-c.done:
	default:
		close(c.done)
	}
	return context.DeadlineExceeded
}

func (c *lateCtx) Done() <-chan struct{} { return c.done }

// liveEntries returns the live entries of job name in the engine's queue
// "cron" of s.
func liveEntries(t *testing.T, s *sched.Scheduler, name string) []sched.Summary {
	t.Helper()
	var out []sched.Summary
	for sm, err := range s.Inspector().List(context.Background(), sched.Query{
		Queues: []string{"cron"},
		States: []sched.State{sched.StateDelayed, sched.StatePending, sched.StateAwaiting, sched.StateRunning},
		Match:  func(sm *sched.Summary) bool { return sm.Key == name },
	}) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, sm)
	}
	return out
}

// sharedEngine returns a started engine on a started shared scheduler,
// both stopped at the end of the test.
func sharedEngine(t *testing.T) (*cron.Engine, *sched.Scheduler) {
	t.Helper()
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := sched.New(sched.Config{Workers: 2, Logger: quiet})
	must(t, err)
	must(t, s.Start(ctx))
	e, err := cron.New(cron.Config{Scheduler: s, Logger: quiet})
	must(t, err)
	must(t, e.Start(ctx))
	t.Cleanup(func() {
		must(t, e.Stop(ctx))
		must(t, s.Stop(ctx))
	})
	return e, s
}

// A Pause whose context expires after the engine checked it leaves the job
// paused with its entry disabled: once the engine has changed the job, its
// entry follows whatever ctx does. (The queue refused the Disable: the job
// was paused with its entry enabled, which came due and, snoozed until the
// job's next time, which had passed, ran again at once, for ever.)
func TestPauseCtxExpiresMidCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, s := sharedEngine(t)
		ctx := context.Background()
		every, err := cron.Every(time.Minute, time.Now().Add(time.Minute))
		must(t, err)
		must(t, e.Register(ctx, "job", every, func(context.Context, time.Time) error { return nil }))
		synctest.Wait()

		err = e.Pause(newLateCtx(1), "job") // the deadline passes inside Pause
		info, _ := e.Job("job")
		ents := liveEntries(t, s, "job")
		t.Logf("Pause: %v; job paused %v; entries %d", err, info.Paused, len(ents))
		if len(ents) != 1 {
			t.Fatalf("%d live entries", len(ents))
		}
		if info.Paused && !ents[0].Disabled {
			t.Errorf("Pause returned %v and left the job paused with its entry enabled (%v, due %v): "+
				"it comes due at %v and is snoozed to that past time again and again", err, ents[0].State, ents[0].RunAt, info.Next)
		}
	})
}

// A Resume whose context expires after the engine checked it leaves the
// job resumed with its entry enabled. (It was resumed with its entry
// disabled: it never ran, and a second Resume did nothing.)
func TestResumeCtxExpiresMidCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, s := sharedEngine(t)
		ctx := context.Background()
		every, err := cron.Every(time.Minute, time.Now().Add(time.Minute))
		must(t, err)
		var mu sync.Mutex
		runs := 0
		must(t, e.Register(ctx, "job", every, func(context.Context, time.Time) error {
			mu.Lock()
			runs++
			mu.Unlock()
			return nil
		}))
		must(t, e.Pause(ctx, "job"))
		synctest.Wait()

		err = e.Resume(newLateCtx(1), "job")
		t.Logf("Resume: %v", err)
		must(t, e.Resume(ctx, "job")) // the caller tries again
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		info, _ := e.Job("job")
		ents := liveEntries(t, s, "job")
		mu.Lock()
		n := runs
		mu.Unlock()
		if n == 0 {
			t.Errorf("after a Resume that failed (%v) and one that succeeded, the job ran %d times in 5 minutes of a 1-minute schedule; job %+v; entries %+v", err, n, info, ents)
		}
	})
}

// An Update whose context expires while the engine moves the job's entry
// (it deletes the entry due later and adds one due earlier) leaves the job
// with its one entry. (It was left with none, and never ran again.)
func TestUpdateCtxExpiresMidCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, s := sharedEngine(t)
		ctx := context.Background()
		hourly, err := cron.Every(time.Hour, time.Now().Add(time.Hour))
		must(t, err)
		must(t, e.Register(ctx, "job", hourly, func(context.Context, time.Time) error { return nil }))
		synctest.Wait()

		minutely, err := cron.Every(time.Minute, time.Now().Add(time.Minute))
		must(t, err)
		// Err calls: Update's check, Add's, Get's (twice), then the
		// Delete's (three): the deadline passes before the Add that
		// follows the Delete.
		for n := 1; n <= 8; n++ {
			before := liveEntries(t, s, "job")
			err = e.Update(newLateCtx(n), "job", minutely)
			after := liveEntries(t, s, "job")
			if _, ok := e.Job("job"); ok && len(after) != 1 {
				t.Fatalf("Update with a context expiring after %d checks: %v; the job had %d entries and has %d: it never runs again", n, err, len(before), len(after))
			}
			must(t, e.Update(ctx, "job", hourly))
		}
	})
}

// countingClock is a scheduler's default clock (fake in a synctest bubble)
// that closes spinning once Now was called limit times after arm; its
// timers are the clock's own.
type countingClock struct {
	sched.Clock
	mu       sync.Mutex
	armed    bool
	n, limit int
	spinning chan struct{}
}

func (c *countingClock) Now() time.Time {
	c.mu.Lock()
	if c.armed {
		if c.n++; c.n == c.limit {
			close(c.spinning)
		}
	}
	c.mu.Unlock()
	return c.Clock.Now()
}

func (c *countingClock) arm() {
	c.mu.Lock()
	c.armed = true
	c.mu.Unlock()
}

// The consequence TestPauseCtxExpiresMidCall guards against: a paused job
// whose Pause's ctx expired midway stays idle when its time comes. The
// clock counts the scheduler's and the engine's reads of it: with the
// entry left enabled, the job read it 100,000 times in what should be two
// idle minutes (a worker spun; in a synctest bubble time stood still).
func TestPauseCtxExpiresMidCallSpins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
		base, err := sched.New(sched.Config{}) // for its default clock
		must(t, err)
		clock := &countingClock{Clock: base.Clock(), limit: 100000, spinning: make(chan struct{})}
		s, err := sched.New(sched.Config{Workers: 2, Logger: quiet, Clock: clock})
		must(t, err)
		must(t, s.Start(ctx))
		e, err := cron.New(cron.Config{Scheduler: s, Logger: quiet})
		must(t, err)
		must(t, e.Start(ctx))
		every, err := cron.Every(time.Minute, time.Now().Add(time.Minute))
		must(t, err)
		must(t, e.Register(ctx, "job", every, func(context.Context, time.Time) error { return nil }))
		synctest.Wait()

		err = e.Pause(newLateCtx(1), "job")
		clock.arm()
		select {
		case <-clock.spinning:
			info, _ := e.Job("job")
			ents := liveEntries(t, s, "job")
			t.Errorf("after a Pause that returned %v, the paused job's entry spins: 100000 clock reads without time passing; job %+v; entry snoozed %d times",
				err, info, ents[0].Snoozes)
			must(t, e.Resume(ctx, "job")) // stops the spin
		case <-time.After(2 * time.Minute):
		}
		must(t, e.Stop(ctx))
		must(t, s.Stop(ctx))
	})
}
