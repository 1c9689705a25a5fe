package cron_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/cron"
	"github.com/jobkit/jobkit/internal/stack"
	"github.com/jobkit/jobkit/internal/testkit"
	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/scope"
)

// goexitNext is a Schedule whose Next calls runtime.Goexit, ending the
// goroutine that called it, from its call number from (counted from 1) on.
// From call from+10 on it returns the zero time instead (no further
// activation), so that an engine that would call it again and again stops.
type goexitNext struct {
	s     cron.Schedule
	mu    sync.Mutex
	from  int // 0: never
	calls int
}

func (g *goexitNext) Next(t time.Time) time.Time {
	g.mu.Lock()
	g.calls++
	n, from := g.calls, g.from
	g.mu.Unlock()
	switch {
	case from == 0 || n < from:
		return g.s.Next(t)
	case n < from+10:
		runtime.Goexit()
	}
	return time.Time{}
}

// exitNext makes the next call of Next, and the following ones, end their
// goroutines.
func (g *goexitNext) exitNext() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.from = g.calls + 1
}

func (g *goexitNext) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.calls
}

// nextExited reports whether err records a Schedule.Next that called
// runtime.Goexit.
func nextExited(err error) bool {
	return errors.Is(err, scope.ErrGoexit) && err != nil && strings.Contains(err.Error(), "Schedule.Next called runtime.Goexit")
}

// exits calls f on a goroutine of its own and reports whether f ended it
// (runtime.Goexit) instead of returning.
func exits(f func()) bool {
	returned := false
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
		returned = true
	}()
	<-done
	return !returned
}

// checkNextExited checks that the job name was stopped by its schedule's
// Next calling runtime.Goexit, which was called calls times in all.
func checkNextExited(t *testing.T, e *cron.Engine, name string, g *goexitNext, calls int) {
	t.Helper()
	info, ok := e.Job(name)
	if !ok || !info.Next.IsZero() || info.Running || !nextExited(info.LastErr) {
		t.Errorf("%s: Job = %+v, %v; want it stopped (no Next) with the Goexit of Next as its last outcome", name, info, ok)
	}
	if n := g.count(); n != calls {
		t.Errorf("%s: Next called %d times, want %d (none after the Goexit)", name, n, calls)
	}
}

// A Schedule whose Next calls runtime.Goexit on one of the scheduler's
// goroutines (at a dispatch, after a run, in the missed-run walk, after an
// Update during a run) stops the job as a Next that panics does: the Goexit
// is its last outcome, Next is not called again, the engine's other jobs go
// on, Update brings the job back, and Stop returns.
func TestEngine_ScheduleGoexitOnWorker(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	minutely := mustParse(t, "* * * * *", cron.WithLocation(time.UTC))
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))

	// revive updates the job with a sound schedule at 00:10:30 and checks
	// that it runs at 00:11 and 00:12, after the runs want.
	revive := func(t *testing.T, e *cron.Engine, log *runLog, want ...string) {
		t.Helper()
		sleepUntil(at(0, 10).Add(30 * time.Second))
		must(t, e.Update(ctx, "job", minutely))
		sleepUntil(at(0, 12).Add(30 * time.Second))
		equalStrings(t, "runs", hhmm(log.get("job")), append(want, "00:11@00:11:00", "00:12@00:12:00"))
		if info, _ := e.Job("job"); info.LastErr != nil {
			t.Errorf("after Update: LastErr %v", info.LastErr)
		}
		if n := len(log.get("steady")); n != 12 {
			t.Errorf("steady: %d runs, want 12", n)
		}
		log.checkNoOverlap(t)
	}

	t.Run("at a dispatch", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			sleepUntil(at(0, 0).Add(30 * time.Second))
			e := startEngine(t, cron.Config{Logger: quiet})
			log := newRunLog()
			// Call 1: Register; 2: the 00:01 dispatch; 3: the 00:02 one.
			g := &goexitNext{s: minutely, from: 3}
			must(t, e.Register(ctx, "job", g, log.fn("job", nil)))
			must(t, e.RegisterSpec(ctx, "steady", "* * * * *", log.fn("steady", nil), cron.WithLocation(time.UTC)))
			sleepUntil(at(0, 5).Add(30 * time.Second))
			checkNextExited(t, e, "job", g, 3)
			equalStrings(t, "runs", hhmm(log.get("job")), []string{"00:01@00:01:00"})
			revive(t, e, log, "00:01@00:01:00")
		})
	})

	t.Run("after a run", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			sleepUntil(at(0, 0).Add(30 * time.Second))
			e := startEngine(t, cron.Config{Logger: quiet})
			log := newRunLog()
			// The 00:01 run ends at 00:02:30, past 00:02: the walk over
			// the missed times calls Next (call 3), which exits.
			g := &goexitNext{s: minutely, from: 3}
			must(t, e.Register(ctx, "job", g, log.fn("job", func(_ context.Context, _ time.Time, i int) error {
				if i == 0 {
					time.Sleep(90 * time.Second)
				}
				return nil
			})))
			must(t, e.RegisterSpec(ctx, "steady", "* * * * *", log.fn("steady", nil), cron.WithLocation(time.UTC)))
			sleepUntil(at(0, 5).Add(30 * time.Second))
			checkNextExited(t, e, "job", g, 3)
			if info, _ := e.Job("job"); info.Runs != 1 {
				t.Errorf("Runs = %d, want 1", info.Runs)
			}
			equalStrings(t, "runs", hhmm(log.get("job")), []string{"00:01@00:01:00"})
			revive(t, e, log, "00:01@00:01:00")
		})
	})

	t.Run("in the missed-run walk", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			sleepUntil(at(0, 0).Add(30 * time.Second))
			e, err := cron.New(cron.Config{Logger: quiet})
			must(t, err)
			t.Cleanup(func() { must(t, e.Stop(ctx)) })
			log := newRunLog()
			// Registered before Start, which comes at 00:05:30: the
			// dispatch sees 00:01 to 00:05 missed (call 2 says 00:02
			// passed too), Due asks for the next time (call 3), then
			// walks back for the latest missed one (call 4), which
			// exits.
			g := &goexitNext{s: minutely, from: 4}
			must(t, e.Register(ctx, "job", g, log.fn("job", nil), cron.WithMissed(cron.RunOnce)))
			each5, err := cron.RunEach(5) // steady makes up 00:01 to 00:05
			must(t, err)
			must(t, e.RegisterSpec(ctx, "steady", "* * * * *", log.fn("steady", nil), cron.WithLocation(time.UTC), cron.WithMissed(each5)))
			sleepUntil(at(0, 5).Add(30 * time.Second))
			must(t, e.Start(ctx))
			sleepUntil(at(0, 6).Add(30 * time.Second))
			checkNextExited(t, e, "job", g, 4)
			equalStrings(t, "runs", hhmm(log.get("job")), nil)
			revive(t, e, log)
		})
	})

	t.Run("after an Update during a run", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			sleepUntil(at(0, 0).Add(30 * time.Second))
			e := startEngine(t, cron.Config{Logger: quiet})
			log := newRunLog()
			// Update calls Next once; the end of the run asks for the
			// first time after it (call 2), which exits.
			g := &goexitNext{s: minutely, from: 2}
			must(t, e.Register(ctx, "job", minutely, log.fn("job", func(ctx context.Context, _ time.Time, i int) error {
				if i == 0 {
					must(t, e.Update(ctx, "job", g))
				}
				return nil
			})))
			must(t, e.RegisterSpec(ctx, "steady", "* * * * *", log.fn("steady", nil), cron.WithLocation(time.UTC)))
			sleepUntil(at(0, 5).Add(30 * time.Second))
			checkNextExited(t, e, "job", g, 2)
			equalStrings(t, "runs", hhmm(log.get("job")), []string{"00:01@00:01:00"})
			revive(t, e, log, "00:01@00:01:00")
		})
	})
}

// A Schedule whose Next calls runtime.Goexit in a management call ends the
// caller's goroutine, and leaves the engine whole: its lock free, nothing
// registered by a Register that did not return, a schedule not changed by an
// Update that did not return, and a Resume that did not return leaves the
// job stopped as by a Next that panics, until Update.
func TestEngine_ScheduleGoexitInCalls(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fn := func(context.Context, time.Time) error { return nil }
	hourly := mustParse(t, "@hourly", cron.WithLocation(time.UTC))
	newEngine := func(t *testing.T) *cron.Engine {
		e, err := cron.New(cron.Config{})
		must(t, err)
		t.Cleanup(func() { testkit.Within(t, "Stop", func() { must(t, e.Stop(ctx)) }) })
		return e
	}

	for _, c := range []struct {
		name string
		from int // the call of Next that ends the goroutine
		opts []cron.Option
	}{
		{"Register", 1, nil},
		{"Register after a restart", 2, []cron.Option{cron.WithLastRun(time.Now().Add(-3 * time.Hour))}}, // 1: Next(last run); 2: Due's
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEngine(t)
			g := &goexitNext{s: hourly, from: c.from}
			if !exits(func() { _ = e.Register(ctx, "job", g, fn, c.opts...) }) {
				t.Fatal("Register returned")
			}
			testkit.Within(t, "Register", func() {
				if _, ok := e.Job("job"); ok {
					t.Error("the job was registered")
				}
				must(t, e.Register(ctx, "job", hourly, fn))
			})
		})
	}

	t.Run("Update", func(t *testing.T) {
		t.Parallel()
		e := newEngine(t)
		must(t, e.Register(ctx, "job", hourly, fn))
		before, _ := e.Job("job")
		if !exits(func() { _ = e.Update(ctx, "job", &goexitNext{s: hourly, from: 1}) }) {
			t.Fatal("Update returned")
		}
		testkit.Within(t, "Job", func() {
			if info, _ := e.Job("job"); info.Schedule != hourly || !info.Next.Equal(before.Next) || info.LastErr != nil {
				t.Errorf("after the Update: Job = %+v", info)
			}
			must(t, e.Update(ctx, "job", hourly))
		})
	})

	t.Run("Resume", func(t *testing.T) {
		t.Parallel()
		e := newEngine(t)
		g := &goexitNext{s: hourly}
		must(t, e.Register(ctx, "job", g, fn))
		must(t, e.Pause(ctx, "job"))
		g.exitNext()
		if !exits(func() { _ = e.Resume(ctx, "job") }) {
			t.Fatal("Resume returned")
		}
		testkit.Within(t, "Job", func() {
			info, _ := e.Job("job")
			if info.Paused || !info.Next.IsZero() || !nextExited(info.LastErr) {
				t.Errorf("after the Resume: Job = %+v; want it resumed and stopped by its schedule", info)
			}
			must(t, e.Update(ctx, "job", hourly))
			if info, _ := e.Job("job"); info.Next.IsZero() || info.LastErr != nil {
				t.Errorf("after Update: Job = %+v", info)
			}
		})
		if n := g.count(); n != 2 {
			t.Errorf("Next called %d times, want 2", n)
		}
	})
}

// goexitClock is a scheduler's Clock that ends the goroutine of one call of
// Now made from within a function whose name starts with a given prefix,
// once armed.
type goexitClock struct {
	sched.Clock
	mu    sync.Mutex
	in    string // the prefix; "": not armed
	fired int
}

// arm makes the next call of Now from within a function whose name starts
// with "github.com/jobkit/jobkit/cron." + in end its goroutine.
func (c *goexitClock) arm(in string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.in = "github.com/jobkit/jobkit/cron." + in
}

func (c *goexitClock) Now() time.Time {
	c.mu.Lock()
	in := c.in
	c.mu.Unlock()
	if in != "" && stack.Within(func(fn string) bool { return strings.HasPrefix(fn, in) }) {
		c.mu.Lock()
		fire := c.in == in
		if fire {
			c.in = ""
			c.fired++
		}
		c.mu.Unlock()
		if fire {
			runtime.Goexit()
		}
	}
	return c.Clock.Now()
}

func (c *goexitClock) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fired
}

// goexitEngine returns a started engine on a started scheduler whose clock
// is a goexitClock; the test stops both at its end, the engine within ten
// seconds.
func goexitEngine(t *testing.T) (*cron.Engine, *goexitClock) {
	t.Helper()
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	base, err := sched.New(sched.Config{}) // for its default clock
	must(t, err)
	clock := &goexitClock{Clock: base.Clock()}
	s, err := sched.New(sched.Config{Workers: 2, Clock: clock, Logger: quiet})
	must(t, err)
	must(t, s.Start(ctx))
	t.Cleanup(func() { must(t, s.Stop(ctx)) })
	e, err := cron.New(cron.Config{Scheduler: s, Logger: quiet})
	must(t, err)
	must(t, e.Start(ctx))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := e.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return e, clock
}

// tick fires at every multiple of d: a schedule faster than any spec, for
// the tests that run in real time.
type tick time.Duration

func (d tick) Next(t time.Time) time.Time { return t.Truncate(time.Duration(d)).Add(time.Duration(d)) }

// A scheduler's Clock that calls runtime.Goexit when the engine reads the
// time at the end of a run (on a worker) takes nothing down: the run is
// recorded, the job runs at its next times, and Stop returns. (In real
// time: an engine that left the job running would spin on its entry,
// which a synctest bubble cannot bound.)
func TestEngine_ClockGoexitAtRunEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, clock := goexitEngine(t)
	more := make(chan struct{})
	must(t, e.Register(ctx, "job", tick(10*time.Millisecond), func(context.Context, time.Time) error {
		if info, _ := e.Job("job"); info.Runs == 0 {
			clock.arm("(*Engine).end")
		} else if info.Runs == 3 {
			close(more)
		}
		return nil
	}))
	testkit.Within(t, "three more runs", func() { <-more })
	if n := clock.count(); n != 1 {
		t.Errorf("the clock ended %d goroutines, want 1", n)
	}
	testkit.Within(t, "Stop", func() { must(t, e.Stop(ctx)) })
	if info, _ := e.Job("job"); info.Running || info.Runs < 4 || info.LastErr != nil {
		t.Errorf("Job = %+v", info)
	}
}

// A scheduler's Clock that calls runtime.Goexit while a management call
// places the job's entry on the queue ends the caller's goroutine, and
// leaves no job without its entry: the job runs at its times.
func TestEngine_ClockGoexitInCalls(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	minutely := mustParse(t, "* * * * *", cron.WithLocation(time.UTC))
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, e *cron.Engine, fn cron.Func) // at 00:00:30
		call  func(e *cron.Engine, fn cron.Func)               // at 00:01:30
		want  []string
	}{{
		name:  "Register",
		setup: func(*testing.T, *cron.Engine, cron.Func) {},
		call:  func(e *cron.Engine, fn cron.Func) { _ = e.Register(ctx, "job", minutely, fn) },
		want:  []string{"00:02@00:02:00", "00:03@00:03:00"},
	}, {
		name: "Resume",
		setup: func(t *testing.T, e *cron.Engine, fn cron.Func) {
			must(t, e.Register(ctx, "job", minutely, fn))
			must(t, e.Pause(ctx, "job"))
		},
		call: func(e *cron.Engine, _ cron.Func) { _ = e.Resume(ctx, "job") },
		want: []string{"00:02@00:02:00", "00:03@00:03:00"},
	}, {
		// The schedule panics at the 00:01 dispatch: the job stops,
		// and its entry ends.
		name: "Update",
		setup: func(t *testing.T, e *cron.Engine, fn cron.Func) {
			must(t, e.Register(ctx, "job", &panicAfter{s: minutely, n: 2}, fn))
		},
		call: func(e *cron.Engine, _ cron.Func) { _ = e.Update(ctx, "job", minutely) },
		want: []string{"00:01@00:01:00", "00:02@00:02:00", "00:03@00:03:00"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				sleepUntil(at(0, 0).Add(30 * time.Second))
				e, clock := goexitEngine(t)
				log := newRunLog()
				c.setup(t, e, log.fn("job", nil))
				sleepUntil(at(0, 1).Add(30 * time.Second))
				clock.arm("(*Engine).place")
				if !exits(func() { c.call(e, log.fn("job", nil)) }) {
					t.Fatalf("%s returned", c.name)
				}
				if n := clock.count(); n != 1 {
					t.Fatalf("the clock ended %d goroutines, want 1", n)
				}
				sleepUntil(at(0, 3).Add(30 * time.Second))
				equalStrings(t, "runs", hhmm(log.get("job")), c.want)
			})
		})
	}
}

// inspectingClock is a scheduler's Clock that calls the engine (Jobs) when
// the engine reads the time at the end of a run.
type inspectingClock struct {
	sched.Clock
	e atomic.Pointer[cron.Engine]
}

func (c *inspectingClock) Now() time.Time {
	if e := c.e.Load(); e != nil && stack.Within(func(fn string) bool { return strings.HasSuffix(fn, "cron.(*Engine).end") }) {
		e.Jobs()
	}
	return c.Clock.Now()
}

// The engine reads a scheduler's Clock outside its lock, so that a Clock
// that calls the engine at the end of a run does not deadlock it. (Real
// time, as above.)
func TestEngine_ClockMayCallTheEngineAtRunEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	base, err := sched.New(sched.Config{})
	must(t, err)
	clock := &inspectingClock{Clock: base.Clock()}
	s, err := sched.New(sched.Config{Workers: 2, Clock: clock, Logger: quiet})
	must(t, err)
	must(t, s.Start(ctx))
	e, err := cron.New(cron.Config{Scheduler: s, Logger: quiet})
	must(t, err)
	clock.e.Store(e)
	must(t, e.Start(ctx))
	ran := make(chan struct{}, 100)
	must(t, e.Register(ctx, "job", tick(10*time.Millisecond), func(context.Context, time.Time) error {
		ran <- struct{}{}
		return nil
	}))
	testkit.Within(t, "two runs and a Job", func() { <-ran; <-ran; e.Job("job") })
	testkit.Within(t, "Stop", func() { must(t, e.Stop(ctx)); must(t, s.Stop(ctx)) })
}
