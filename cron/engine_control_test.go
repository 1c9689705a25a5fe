package cron_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/cron"
	"github.com/jobkit/jobkit/internal/logbuf"
	"github.com/jobkit/jobkit/sched"
)

// hhmm formats the scheduled times and starts of runs as "15:04@15:04".
func hhmm(runs []runRec) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.Scheduled.Format("15:04") + "@" + r.Start.Format("15:04:05")
	}
	return out
}

var day = time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)

// at returns day + h hours m minutes.
func at(h, m int) time.Time {
	return day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
}

// Pause during a run: the run finishes; times that fall while the job is
// paused never run, whatever the policy; Resume runs from the next time.
func TestEngine_PauseResumeWhileRunning(t *testing.T) {
	t.Parallel()
	each5, err := cron.RunEach(5)
	must(t, err)
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sleepUntil(at(0, 0).Add(30 * time.Second))
		e := startEngine(t, cron.Config{})
		log := newRunLog()
		must(t, e.RegisterSpec(ctx, "job", "*/10 * * * *", log.fn("job", sleeper(func(int) time.Duration { return 3 * time.Minute })),
			cron.WithLocation(time.UTC), cron.WithMissed(each5)))
		sleepUntil(at(0, 11)) // the 00:10 run is running
		must(t, e.Pause(ctx, "job"))
		must(t, e.Pause(ctx, "job")) // idempotent
		if info, _ := e.Job("job"); !info.Paused || !info.Running {
			t.Errorf("after Pause during a run: %+v", info)
		}
		sleepUntil(at(0, 55))
		if info, _ := e.Job("job"); !info.Paused || info.Running || info.Runs != 1 {
			t.Errorf("paused: %+v", info)
		}
		must(t, e.Resume(ctx, "job"))
		must(t, e.Resume(ctx, "job")) // idempotent
		sleepUntil(at(1, 25))
		equalStrings(t, "runs", hhmm(log.get("job")), []string{"00:10@00:10:00", "01:00@01:00:00", "01:10@01:10:00", "01:20@01:20:00"})
		if r := log.get("job")[0]; !r.End.Equal(at(0, 13)) {
			t.Errorf("the run paused under finished at %v", r.End)
		}
		log.checkNoOverlap(t)
	})
}

// Unregister during a run: the run finishes with its context not
// cancelled, nothing runs after it, and the job's entry ends.
func TestEngine_UnregisterWhileRunning(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, err := sched.New(sched.Config{})
		must(t, err)
		must(t, s.Start(ctx))
		defer s.Stop(ctx)
		e := startEngine(t, cron.Config{Scheduler: s, Queue: "jobs"})
		q, err := sched.QueueOf[string, string](s, "jobs")
		must(t, err)
		log := newRunLog()
		release := make(chan struct{})
		var ctxErr atomic.Value
		must(t, e.RegisterSpec(ctx, "job", "* * * * *", log.fn("job", func(ctx context.Context, _ time.Time, i int) error {
			if i == 0 {
				<-release
				ctxErr.Store(errors.Join(ctx.Err(), nil) == nil)
			}
			return nil
		}), cron.WithLocation(time.UTC)))
		sleepUntil(time.Now().Truncate(time.Minute).Add(90 * time.Second)) // the first run is blocked
		must(t, e.Unregister(ctx, "job"))
		if _, ok := e.Job("job"); ok || len(e.Jobs()) != 0 {
			t.Errorf("unregistered job still listed")
		}
		if err := e.Unregister(ctx, "job"); !errors.Is(err, cron.ErrUnknownJob) {
			t.Errorf("second Unregister: %v", err)
		}
		time.Sleep(5 * time.Minute)
		close(release)
		synctest.Wait()
		time.Sleep(5 * time.Minute)
		if runs := log.get("job"); len(runs) != 1 || runs[0].End.IsZero() {
			t.Errorf("runs after Unregister: %+v", runs)
		}
		if ok, _ := ctxErr.Load().(bool); !ok {
			t.Errorf("the run's context was cancelled by Unregister")
		}
		if c, _ := q.Counts(ctx); c.Live() != 0 {
			t.Errorf("live entries after the run ended: %+v", c)
		}
	})
}

// Update during a run applies after it: the job waits for the first time of
// the new schedule after the run ends. Update outside a run moves the next
// run to the new schedule's first time after now, earlier or later.
func TestEngine_Update(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sleepUntil(at(0, 0).Add(30 * time.Second))
		e := startEngine(t, cron.Config{})
		log := newRunLog()
		must(t, e.RegisterSpec(ctx, "job", "*/10 * * * *", log.fn("job", func(_ context.Context, _ time.Time, i int) error {
			if i == 0 {
				time.Sleep(3 * time.Minute)
			}
			return nil
		}), cron.WithLocation(time.UTC)))
		sleepUntil(at(0, 11))
		must(t, e.UpdateSpec(ctx, "job", "*/7 * * * *", cron.WithLocation(time.UTC))) // during the 00:10 run
		if info, _ := e.Job("job"); info.Schedule.(interface{ String() string }).String() != "*/7 * * * *" {
			t.Errorf("Update during a run: schedule %v", info.Schedule)
		}
		sleepUntil(at(0, 30))
		// Later: from "*/7" (next 00:35) to "@daily" (next midnight):
		// no run at 00:35.
		must(t, e.UpdateSpec(ctx, "job", "@daily", cron.WithLocation(time.UTC)))
		sleepUntil(at(10, 0).Add(30 * time.Second))
		// Earlier: from "@daily" to "*/5 * * * *": next 10:05.
		must(t, e.UpdateSpec(ctx, "job", "*/5 * * * *", cron.WithLocation(time.UTC)))
		sleepUntil(at(10, 12))
		// @every counts from the update.
		must(t, e.UpdateSpec(ctx, "job", "@every 25m"))
		sleepUntil(at(11, 5))
		equalStrings(t, "runs", hhmm(log.get("job")), []string{
			"00:10@00:10:00", "00:14@00:14:00", "00:21@00:21:00", "00:28@00:28:00",
			"10:05@10:05:00", "10:10@10:10:00", "10:37@10:37:00", "11:02@11:02:00",
		})
		if err := e.Update(ctx, "nope", mustParse(t, "@daily")); !errors.Is(err, cron.ErrUnknownJob) {
			t.Errorf("Update of an unknown job: %v", err)
		}
		log.checkNoOverlap(t)
	})
}

// A job unregistered during a run and registered again at once: the new
// job does not start while the old run goes on; its times that passed
// meanwhile are missed (its policy decides), then it runs on its schedule.
func TestEngine_ReRegisterWhileRunning(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sleepUntil(at(0, 0).Add(30 * time.Second))
		e := startEngine(t, cron.Config{})
		log := newRunLog()
		fn := log.fn("job", sleeper(func(i int) time.Duration {
			if i == 0 {
				return 10 * time.Minute
			}
			return 0
		}))
		must(t, e.RegisterSpec(ctx, "job", "*/10 * * * *", fn, cron.WithLocation(time.UTC)))
		sleepUntil(at(0, 12)) // the 00:10 run lasts until 00:20
		must(t, e.Unregister(ctx, "job"))
		must(t, e.RegisterSpec(ctx, "job", "*/3 * * * *", fn, cron.WithLocation(time.UTC), cron.WithMissed(cron.RunOnce)))
		sleepUntil(at(0, 25))
		// 00:15 and 00:18 passed during the old run: RunOnce runs 00:18
		// when it ends at 00:20.
		equalStrings(t, "runs", hhmm(log.get("job")), []string{"00:10@00:10:00", "00:18@00:20:00", "00:21@00:21:00", "00:24@00:24:00"})
		log.checkNoOverlap(t)
	})
}

// The leader hook: while it says false nothing runs and those times are
// never made up; a LeaderFunc that panics counts as false.
func TestEngine_Leader(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		var leader atomic.Int32 // 0 follower, 1 leader, 2 panic
		sleepUntil(at(0, 0).Add(30 * time.Second))
		var logged logbuf.Buffer
		e := startEngine(t, cron.Config{Logger: logged.Logger(), LeaderFunc: func() bool {
			if leader.Load() == 2 {
				panic("election backend down")
			}
			return leader.Load() == 1
		}})
		log := newRunLog()
		must(t, e.RegisterSpec(ctx, "job", "0 * * * *", log.fn("job", nil), cron.WithLocation(time.UTC), cron.WithMissed(cron.RunOnce)))
		sleepUntil(at(3, 30))
		leader.Store(1)
		sleepUntil(at(5, 30))
		leader.Store(2)
		sleepUntil(at(7, 30))
		leader.Store(1)
		sleepUntil(at(8, 30))
		equalStrings(t, "runs", hhmm(log.get("job")), []string{"04:00@04:00:00", "05:00@05:00:00", "08:00@08:00:00"})
		if info, _ := e.Job("job"); info.Runs != 3 || !info.Last.Equal(at(8, 0)) {
			t.Errorf("Job = %+v", info)
		}
		if n := strings.Count(logged.String(), "LeaderFunc panicked"); n != 2 {
			t.Errorf("%d warnings of a panicking LeaderFunc, want 2:\n%s", n, logged.String())
		}
	})
}

// Stop drains: it waits for the run in progress, and nothing starts after
// it. A Stop whose context ends first returns its error; a later Stop
// waits again.
func TestEngine_StopDrains(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sleepUntil(at(0, 0).Add(30 * time.Second))
		e, err := cron.New(cron.Config{})
		must(t, err)
		must(t, e.Start(ctx))
		log := newRunLog()
		var cancelled atomic.Bool
		must(t, e.RegisterSpec(ctx, "slow", "* * * * *", log.fn("slow", func(ctx context.Context, _ time.Time, _ int) error {
			time.Sleep(5 * time.Minute)
			cancelled.Store(ctx.Err() != nil)
			return nil
		}), cron.WithLocation(time.UTC)))
		must(t, e.RegisterSpec(ctx, "fast", "* * * * * *", log.fn("fast", nil), cron.WithLocation(time.UTC)))
		sleepUntil(at(0, 2).Add(500 * time.Millisecond))
		short, cancel := context.WithTimeout(ctx, time.Minute)
		if err := e.Stop(short); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Stop with a short context: %v", err)
		}
		cancel()
		if err := e.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if now := time.Now(); !now.Equal(at(0, 6)) {
			t.Errorf("Stop returned at %v, want 00:06, when the 00:01 run ended", now)
		}
		slow, fast := len(log.get("slow")), len(log.get("fast"))
		if slow != 1 || fast != 90 {
			t.Errorf("%d slow and %d fast runs, want 1 and 90", slow, fast)
		}
		if cancelled.Load() {
			t.Errorf("Stop cancelled the run's context")
		}
		time.Sleep(time.Hour)
		if len(log.get("slow")) != slow || len(log.get("fast")) != fast {
			t.Errorf("runs started after Stop")
		}
		must(t, e.Stop(ctx)) // idempotent
		if err := e.RegisterSpec(ctx, "late", "@daily", log.fn("late", nil)); !errors.Is(err, cron.ErrStopped) {
			t.Errorf("Register after Stop: %v", err)
		}
		if err := e.Start(ctx); !errors.Is(err, cron.ErrStopped) {
			t.Errorf("Start after Stop: %v", err)
		}
	})
}

// Jobs registered before Start wait for it; Stop without Start is fine.
func TestEngine_RegisterBeforeStart(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sleepUntil(at(0, 0).Add(30 * time.Second))
		e, err := cron.New(cron.Config{})
		must(t, err)
		log := newRunLog()
		must(t, e.RegisterSpec(ctx, "job", "*/10 * * * *", log.fn("job", nil), cron.WithLocation(time.UTC), cron.WithMissed(cron.RunOnce)))
		sleepUntil(at(0, 25))
		if n := len(log.get("job")); n != 0 {
			t.Errorf("%d runs before Start", n)
		}
		must(t, e.Start(ctx))
		must(t, e.Start(ctx)) // a second Start does nothing
		sleepUntil(at(0, 35))
		// 00:10 and 00:20 passed before Start: missed, RunOnce runs 00:20.
		equalStrings(t, "runs", hhmm(log.get("job")), []string{"00:20@00:25:00", "00:30@00:30:00"})
		must(t, e.Stop(ctx))

		never, err := cron.New(cron.Config{})
		must(t, err)
		must(t, never.RegisterSpec(ctx, "job", "@hourly", log.fn("never", nil)))
		must(t, never.Stop(ctx))
	})
}

// Two engines share one scheduler on two queues; stopping one leaves the
// other and the scheduler running.
func TestEngine_SharedScheduler(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sleepUntil(at(0, 0).Add(30 * time.Second))
		s, err := sched.New(sched.Config{Workers: 2})
		must(t, err)
		must(t, s.Start(ctx))
		a, err := cron.New(cron.Config{Scheduler: s, Queue: "a"})
		must(t, err)
		b, err := cron.New(cron.Config{Scheduler: s, Queue: "b"})
		must(t, err)
		if _, err := cron.New(cron.Config{Scheduler: s, Queue: "a"}); !errors.Is(err, sched.ErrDuplicateQueue) {
			t.Errorf("a second engine on queue a: %v", err)
		}
		log := newRunLog()
		must(t, a.RegisterSpec(ctx, "job", "*/10 * * * *", log.fn("a", nil), cron.WithLocation(time.UTC)))
		must(t, b.RegisterSpec(ctx, "job", "*/10 * * * *", log.fn("b", nil), cron.WithLocation(time.UTC)))
		must(t, a.Start(ctx))
		must(t, b.Start(ctx))
		sleepUntil(at(0, 25))
		must(t, a.Stop(ctx))
		sleepUntil(at(0, 45))
		must(t, b.Stop(ctx))
		must(t, s.Stop(ctx))
		equalStrings(t, "a", hhmm(log.get("a")), []string{"00:10@00:10:00", "00:20@00:20:00"})
		equalStrings(t, "b", hhmm(log.get("b")), []string{"00:10@00:10:00", "00:20@00:20:00", "00:30@00:30:00", "00:40@00:40:00"})
	})
}

// A handler may call the engine: list jobs, update and unregister itself,
// register another job.
func TestEngine_ReentrantCalls(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sleepUntil(at(0, 0).Add(30 * time.Second))
		e := startEngine(t, cron.Config{})
		log := newRunLog()
		self := log.fn("self", func(ctx context.Context, _ time.Time, i int) error {
			if info, ok := e.Job("self"); !ok || !info.Running {
				t.Errorf("from its run: Job = %+v, %v", info, ok)
			}
			switch i {
			case 0:
				must(t, e.UpdateSpec(ctx, "self", "*/5 * * * *", cron.WithLocation(time.UTC)))
				must(t, e.RegisterSpec(ctx, "other", "*/7 * * * *", log.fn("other", nil), cron.WithLocation(time.UTC)))
				must(t, e.Pause(ctx, "other"))
				must(t, e.Resume(ctx, "other"))
			case 2:
				must(t, e.Unregister(ctx, "self"))
			}
			return nil
		})
		must(t, e.RegisterSpec(ctx, "self", "*/10 * * * *", self, cron.WithLocation(time.UTC)))
		sleepUntil(at(0, 30).Add(30 * time.Second))
		equalStrings(t, "self", hhmm(log.get("self")), []string{"00:10@00:10:00", "00:15@00:15:00", "00:20@00:20:00"})
		equalStrings(t, "other", hhmm(log.get("other")), []string{"00:14@00:14:00", "00:21@00:21:00", "00:28@00:28:00"})
	})
}
