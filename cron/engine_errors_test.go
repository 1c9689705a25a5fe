package cron_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/cron"
	"github.com/jobkit/jobkit/internal/logbuf"
	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/scope"
)

// panicky is a Schedule whose Next panics.
type panicky struct{}

func (panicky) Next(time.Time) time.Time { panic("broken schedule") }

// noPanic calls f and fails the test if it panics.
func noPanic(t *testing.T, what string, f func() error) error {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s panicked: %v", what, r)
		}
	}()
	return f()
}

// Bad input gives errors, never a panic: specs robfig's parser panics on or
// cannot use, duplicate names, nil handlers and schedules, invalid bounds,
// retry policies and configs, unknown names, nil contexts.
func TestEngine_BadInput(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := startEngine(t, cron.Config{})
		fn := func(context.Context, time.Time) error { return nil }
		for _, spec := range []string{
			"TZ=UTC", "CRON_TZ=UTC", "TZ=", "TZ=UTC ", "CRON_TZ=Nowhere/Zone * * * * *",
			"@every 500ms", "@every 0s", "@every -1m", "@every", "@every 1x",
			"0 0 30 2 *", "0 0 31 4 *", "", " ", "* * *", "61 * * * *", ",", "* * * * * * *", "@fortnightly",
		} {
			err := noPanic(t, "RegisterSpec "+spec, func() error { return e.RegisterSpec(ctx, "job", spec, fn) })
			if !errors.Is(err, cron.ErrInvalidSpec) {
				t.Errorf("RegisterSpec(%q) = %v, want ErrInvalidSpec", spec, err)
			}
			err = noPanic(t, "UpdateSpec "+spec, func() error { return e.UpdateSpec(ctx, "job", spec) })
			if !errors.Is(err, cron.ErrInvalidSpec) {
				t.Errorf("UpdateSpec(%q) = %v, want ErrInvalidSpec", spec, err)
			}
		}
		if err := e.RegisterSpec(ctx, "job", "@daily", fn, cron.WithLocation(nil)); !errors.Is(err, cron.ErrInvalidLocation) {
			t.Errorf("WithLocation(nil): %v", err)
		}

		hourly := mustParse(t, "@hourly")
		invalid := []struct {
			name string
			err  error
			f    func() error
		}{
			{"empty name", cron.ErrInvalidJob, func() error { return e.Register(ctx, "", hourly, fn) }},
			{"nil schedule", cron.ErrInvalidJob, func() error { return e.Register(ctx, "job", nil, fn) }},
			{"typed nil schedule", cron.ErrInvalidJob, func() error { return e.Register(ctx, "job", (*cron.IntervalSchedule)(nil), fn) }},
			{"panicking schedule", cron.ErrInvalidJob, func() error { return e.Register(ctx, "job", panicky{}, fn) }},
			{"panicking schedule after a restart", cron.ErrInvalidJob, func() error {
				return e.Register(ctx, "job", panicky{}, fn, cron.WithLastRun(time.Now().Add(-time.Hour)))
			}},
			{"nil handler", cron.ErrInvalidJob, func() error { return e.Register(ctx, "job", hourly, nil) }},
			//lint:ignore SA1012 the nil context is the bad input under test
			{"nil context", cron.ErrInvalidJob, func() error { return e.Register(nil, "job", hourly, fn) }},
			{"negative retries", cron.ErrInvalidJob, func() error {
				return e.Register(ctx, "job", hourly, fn, cron.WithRetry(sched.RetryPolicy{MaxRetries: -1}))
			}},
			{"negative base", cron.ErrInvalidJob, func() error {
				return e.Register(ctx, "job", hourly, fn, cron.WithRetry(sched.RetryPolicy{Base: -1}))
			}},
			{"negative cap", cron.ErrInvalidJob, func() error {
				return e.Register(ctx, "job", hourly, fn, cron.WithRetry(sched.RetryPolicy{MaxDelay: -1}))
			}},
			{"NaN jitter", cron.ErrInvalidJob, func() error {
				return e.Register(ctx, "job", hourly, fn, cron.WithRetry(sched.RetryPolicy{Jitter: math.NaN()}))
			}},
			{"jitter 1", cron.ErrInvalidJob, func() error {
				return e.Register(ctx, "job", hourly, fn, cron.WithRetry(sched.RetryPolicy{Jitter: 1}))
			}},
			{"RunEach(0)", cron.ErrInvalidBound, func() error { _, err := cron.RunEach(0); return err }},
			{"RunEach(-1)", cron.ErrInvalidBound, func() error { _, err := cron.RunEach(-1); return err }},
			{"RunEach(max+1)", cron.ErrInvalidBound, func() error { _, err := cron.RunEach(cron.MaxRunEach + 1); return err }},
			{"unknown Unregister", cron.ErrUnknownJob, func() error { return e.Unregister(ctx, "nope") }},
			{"unknown Pause", cron.ErrUnknownJob, func() error { return e.Pause(ctx, "nope") }},
			{"unknown Resume", cron.ErrUnknownJob, func() error { return e.Resume(ctx, "nope") }},
			{"unknown Update", cron.ErrUnknownJob, func() error { return e.Update(ctx, "nope", hourly) }},
			{"nil Update schedule", cron.ErrInvalidJob, func() error { return e.Update(ctx, "nope", nil) }},
			{"panicking Update schedule", cron.ErrInvalidJob, func() error { return e.Update(ctx, "nope", panicky{}) }},
			//lint:ignore SA1012 the nil context is the bad input under test
			{"nil ctx Unregister", cron.ErrInvalidJob, func() error { return e.Unregister(nil, "nope") }},
			//lint:ignore SA1012 the nil context is the bad input under test
			{"nil ctx Pause", cron.ErrInvalidJob, func() error { return e.Pause(nil, "nope") }},
			//lint:ignore SA1012 the nil context is the bad input under test
			{"nil ctx Update", cron.ErrInvalidJob, func() error { return e.Update(nil, "nope", hourly) }},
			//lint:ignore SA1012 the nil context is the bad input under test
			{"nil ctx Start", cron.ErrInvalidConfig, func() error { return e.Start(nil) }},
			//lint:ignore SA1012 the nil context is the bad input under test
			{"nil ctx Stop", cron.ErrInvalidConfig, func() error { return e.Stop(nil) }},
			{"negative Workers", cron.ErrInvalidConfig, func() error { _, err := cron.New(cron.Config{Workers: -1}); return err }},
			{"huge Workers", cron.ErrInvalidConfig, func() error { _, err := cron.New(cron.Config{Workers: 1 << 30}); return err }},
			{"negative MaxConcurrency", cron.ErrInvalidConfig, func() error { _, err := cron.New(cron.Config{MaxConcurrency: -1}); return err }},
			{"long queue name", cron.ErrInvalidConfig, func() error { _, err := cron.New(cron.Config{Queue: strings.Repeat("q", 300)}); return err }},
			{"Workers with a Scheduler", cron.ErrInvalidConfig, func() error {
				s, err := sched.New(sched.Config{})
				must(t, err)
				_, err = cron.New(cron.Config{Scheduler: s, Workers: 2})
				return err
			}},
		}
		for _, c := range invalid {
			if err := noPanic(t, c.name, c.f); !errors.Is(err, c.err) {
				t.Errorf("%s: %v, want %v", c.name, err, c.err)
			}
		}

		must(t, e.Register(ctx, "job", hourly, fn))
		if err := e.Register(ctx, "job", hourly, fn); !errors.Is(err, cron.ErrDuplicateJob) {
			t.Errorf("duplicate: %v", err)
		}
		if err := e.RegisterSpec(ctx, "job", "@daily", fn); !errors.Is(err, cron.ErrDuplicateJob) {
			t.Errorf("duplicate spec: %v", err)
		}
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		if err := e.Register(cancelled, "other", hourly, fn); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled context: %v", err)
		}
		if _, ok := e.Job("other"); ok {
			t.Errorf("a job was registered under a cancelled context")
		}
		if got := len(e.Jobs()); got != 1 {
			t.Errorf("%d jobs registered, want 1", got)
		}
	})
}

// A failing run never stops later runs: errors, panics (with their value
// and stack), panics with an error value and runtime.Goexit are recorded as
// the last outcome, and the job runs at each of its times.
func TestEngine_Failures(t *testing.T) {
	t.Parallel()
	errBoom := errors.New("boom")
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sleepUntil(at(0, 0).Add(30 * time.Second))
		e := startEngine(t, cron.Config{})
		log := newRunLog()
		must(t, e.RegisterSpec(ctx, "job", "* * * * *", log.fn("job", func(_ context.Context, _ time.Time, i int) error {
			switch i % 6 {
			case 1:
				return errBoom
			case 2:
				panic("kaput")
			case 3:
				panic(fmt.Errorf("wrapped: %w", errBoom))
			case 4:
				runtime.Goexit()
			case 5:
				_ = []int{}[i%6-5] // a runtime error: index out of range
			}
			return nil
		}), cron.WithLocation(time.UTC)))
		check := []func(error) bool{
			func(err error) bool { return err == nil },
			func(err error) bool { return errors.Is(err, errBoom) },
			func(err error) bool {
				var p *scope.PanicError
				return errors.As(err, &p) && p.Value == "kaput" && strings.Contains(string(p.Stack), "engine_errors_test.go")
			},
			func(err error) bool {
				var p *scope.PanicError
				return errors.As(err, &p) && errors.Is(err, errBoom)
			},
			func(err error) bool { return errors.Is(err, scope.ErrGoexit) },
			func(err error) bool {
				var re runtime.Error
				return errors.As(err, &re)
			},
		}
		for i := range 12 {
			sleepUntil(at(0, i+1).Add(30 * time.Second))
			info, _ := e.Job("job")
			if info.Runs != int64(i+1) || !check[i%6](info.LastErr) {
				t.Errorf("after run %d: Runs %d, LastErr %v", i, info.Runs, info.LastErr)
			}
			if want := int64(i + 1 - (i+6)/6); info.Failures != want {
				t.Errorf("after run %d: Failures %d, want %d", i, info.Failures, want)
			}
		}
		runs := log.get("job")
		if len(runs) != 12 {
			t.Fatalf("%d runs, want 12", len(runs))
		}
		for i, r := range runs {
			if want := at(0, i+1); !r.Start.Equal(want) || !r.Scheduled.Equal(want) {
				t.Errorf("run %d for %v at %v", i, r.Scheduled, r.Start)
			}
		}
	})
}

// Retries are the job's choice (WithRetry): a failed run runs again for the
// same time after the policy's delays; a retry that would not start before
// the next time is dropped; without WithRetry nothing is retried.
func TestEngine_Retry(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sleepUntil(at(0, 0).Add(30 * time.Second))
		e := startEngine(t, cron.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		log := newRunLog()
		fail := errors.New("fail")
		// Hourly: the 01:00 run fails twice then succeeds; from 02:00
		// every attempt fails.
		must(t, e.RegisterSpec(ctx, "hourly", "0 * * * *", log.fn("hourly", func(_ context.Context, at time.Time, i int) error {
			if at.Hour() >= 2 || i < 2 {
				return fail
			}
			return nil
		}), cron.WithLocation(time.UTC), cron.WithRetry(sched.RetryPolicy{MaxRetries: 2, Base: time.Minute})))
		// Every two minutes, retried after five: never retried.
		must(t, e.RegisterSpec(ctx, "often", "*/2 * * * *", log.fn("often", func(context.Context, time.Time, int) error { return fail }),
			cron.WithLocation(time.UTC), cron.WithRetry(sched.RetryPolicy{MaxRetries: 3, Base: 5 * time.Minute})))
		// A Delay that panics: no retry.
		must(t, e.RegisterSpec(ctx, "bad-delay", "0 * * * *", log.fn("bad-delay", func(context.Context, time.Time, int) error { return fail }),
			cron.WithLocation(time.UTC), cron.WithRetry(sched.RetryPolicy{MaxRetries: 3, Delay: func(int, error) time.Duration { panic("no") }})))
		// No WithRetry: no retry.
		must(t, e.RegisterSpec(ctx, "plain", "0 * * * *", log.fn("plain", func(context.Context, time.Time, int) error { return fail }),
			cron.WithLocation(time.UTC)))
		sleepUntil(at(1, 0).Add(90 * time.Second))
		if info, _ := e.Job("hourly"); !info.RetryAt.Equal(at(1, 3)) {
			t.Errorf("RetryAt = %v, want 01:03", info.RetryAt)
		}
		sleepUntil(at(3, 0).Add(30 * time.Second))
		equalStrings(t, "hourly", hhmm(log.get("hourly")), []string{
			"01:00@01:00:00", "01:00@01:01:00", "01:00@01:03:00",
			"02:00@02:00:00", "02:00@02:01:00", "02:00@02:03:00",
			"03:00@03:00:00",
		})
		if n := len(log.get("often")); n != 90 {
			t.Errorf("often: %d runs, want 90 (no retries)", n)
		}
		equalStrings(t, "bad-delay", hhmm(log.get("bad-delay")), []string{"01:00@01:00:00", "02:00@02:00:00", "03:00@03:00:00"})
		equalStrings(t, "plain", hhmm(log.get("plain")), []string{"01:00@01:00:00", "02:00@02:00:00", "03:00@03:00:00"})
		log.checkNoOverlap(t)
	})
}

// A Schedule whose Next panics after registration stops the job, with the
// panic as its last outcome; other jobs go on.
func TestEngine_SchedulePanicsLater(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sleepUntil(at(0, 0).Add(30 * time.Second))
		e := startEngine(t, cron.Config{})
		log := newRunLog()
		must(t, e.Register(ctx, "flaky", &panicAfter{s: mustParse(t, "* * * * *", cron.WithLocation(time.UTC)), n: 3}, log.fn("flaky", nil)))
		must(t, e.RegisterSpec(ctx, "steady", "* * * * *", log.fn("steady", nil), cron.WithLocation(time.UTC)))
		sleepUntil(at(0, 10).Add(30 * time.Second))
		info, _ := e.Job("flaky")
		var p *scope.PanicError
		if !errors.As(info.LastErr, &p) || !info.Next.IsZero() {
			t.Errorf("flaky: %+v", info)
		}
		if n := len(log.get("flaky")); n != 2 {
			t.Errorf("flaky: %d runs, want 2", n)
		}
		if n := len(log.get("steady")); n != 10 {
			t.Errorf("steady: %d runs, want 10", n)
		}
	})
}

// panicAfter panics from its n-th call of Next on.
type panicAfter struct {
	s     cron.Schedule
	n     int
	calls int
}

func (p *panicAfter) Next(t time.Time) time.Time {
	if p.calls++; p.calls >= p.n {
		panic("schedule gave up")
	}
	return p.s.Next(t)
}

// Hostile callbacks: a LeaderFunc and a retry Delay that call
// runtime.Goexit, and a handler that calls Stop. The engine's state stays
// consistent: jobs go on running, and Stop returns.
func TestEngine_HostileCallbacks(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sleepUntil(at(0, 0).Add(30 * time.Second))
		var logged logbuf.Buffer
		goexitLeader := true
		e := startEngine(t, cron.Config{
			Logger: logged.Logger(),
			// Goexit on the first call only (calls come one at a time:
			// one job).
			LeaderFunc: func() bool {
				if goexitLeader {
					goexitLeader = false
					runtime.Goexit()
				}
				return true
			},
		})
		log := newRunLog()
		must(t, e.RegisterSpec(ctx, "job", "*/10 * * * *", log.fn("job", func(context.Context, time.Time, int) error {
			return errors.New("fail")
		}), cron.WithLocation(time.UTC), cron.WithRetry(sched.RetryPolicy{MaxRetries: 1, Delay: func(int, error) time.Duration {
			runtime.Goexit()
			return 0
		}})))
		sleepUntil(at(0, 35))
		// 00:10 skipped (the LeaderFunc exited), 00:20 and 00:30 ran and
		// failed; the Delay exited, so no retry.
		equalStrings(t, "runs", hhmm(log.get("job")), []string{"00:20@00:20:00", "00:30@00:30:00"})
		if info, _ := e.Job("job"); info.Running || info.Runs != 2 || !info.RetryAt.IsZero() {
			t.Errorf("Job = %+v", info)
		}
		if !strings.Contains(logged.String(), "LeaderFunc exited its goroutine") {
			t.Errorf("no warning of the LeaderFunc's Goexit:\n%s", logged.String())
		}

		// A handler that calls Stop does not wait for itself: Stop
		// returns nil at once, even with a context that never ends, and
		// nothing starts afterwards.
		stopErr := make(chan error, 1)
		must(t, e.RegisterSpec(ctx, "stopper", "45 0 * * *", log.fn("stopper", func(ctx context.Context, _ time.Time, _ int) error {
			t0 := time.Now()
			err := e.Stop(context.Background())
			if waited := time.Since(t0); waited != 0 {
				err = fmt.Errorf("Stop waited %v: %v", waited, err)
			}
			stopErr <- err
			return nil
		}), cron.WithLocation(time.UTC)))
		sleepUntil(at(0, 50))
		if err := <-stopErr; err != nil {
			t.Errorf("Stop from a handler: %v", err)
		}
		sleepUntil(at(1, 30))
		// 00:40 ran before Stop at 00:45; nothing after.
		if n := len(log.get("job")); n != 3 {
			t.Errorf("%d runs of job, want 3: nothing starts after Stop", n)
		}
	})
}

// Once the engine was stopped, Update, Pause and Resume return ErrStopped
// and change nothing, also with a shared scheduler that still runs (whose
// queue would take the entry): the job keeps its schedule and its state.
func TestUpdatePauseResumeAfterStopReturnErrStopped(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, err := sched.New(sched.Config{Workers: 2, Logger: slog.New(slog.DiscardHandler)})
		must(t, err)
		must(t, s.Start(ctx))
		defer func() { must(t, s.Stop(ctx)) }()
		e, err := cron.New(cron.Config{Scheduler: s})
		must(t, err)
		nop := func(context.Context, time.Time) error { return nil }
		must(t, e.RegisterSpec(ctx, "daily", "@daily", nop))
		must(t, e.RegisterSpec(ctx, "paused", "@daily", nop))
		must(t, e.Pause(ctx, "paused"))
		must(t, e.Start(ctx))
		must(t, e.Stop(ctx))
		before := e.Jobs()
		for name, err := range map[string]error{
			"Update":     e.UpdateSpec(ctx, "daily", "@hourly"),
			"Pause":      e.Pause(ctx, "daily"),
			"Resume":     e.Resume(ctx, "paused"),
			"Update one": e.Update(ctx, "paused", mustParse(t, "@hourly")),
		} {
			if !errors.Is(err, cron.ErrStopped) {
				t.Errorf("%s after Stop: %v, want ErrStopped", name, err)
			}
		}
		after := e.Jobs()
		if len(after) != len(before) {
			t.Fatalf("jobs %v after the refused calls, want %v", after, before)
		}
		for i := range after {
			if a, b := after[i], before[i]; a.Paused != b.Paused || !a.Next.Equal(b.Next) {
				t.Errorf("job %s changed by a refused call: %+v, was %+v", a.Name, a, b)
			}
		}
	})
}
