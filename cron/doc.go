// Package cron runs periodic jobs: schedules parsed from cron specs,
// fixed-rate intervals, what to do about runs that were missed while a job
// could not run, and an [Engine] that runs jobs on a sched queue with exactly
// one entry per job.
//
// It has two layers. The schedule layer ([Parse], [Every], [Missed], [Due])
// is pure functions of their arguments: no goroutines, no clock, no state;
// schedules are immutable and safe for concurrent use. The [Engine] is built
// on it and on package sched (see "Engine" below).
//
// # Specs
//
// [Parse] reads robfig/cron/v3's syntax (its parser does the reading):
//
//	┌───────────── second (optional; 0-59)
//	│ ┌─────────── minute (0-59)
//	│ │ ┌───────── hour (0-23)
//	│ │ │ ┌─────── day of month (1-31)
//	│ │ │ │ ┌───── month (1-12 or jan-dec)
//	│ │ │ │ │ ┌─── day of week (0-6 or sun-sat; 0 is Sunday)
//	* * * * * *
//
// with lists (1,15), ranges (mon-fri), steps (*/15, 0-30/10) and ? for *.
// When the day-of-month or the day-of-week field is written * (or ?, with or
// without /1), a day must match both; otherwise either (robfig's rule, close
// to cron(8)'s). Descriptors: @yearly (@annually), @monthly, @weekly, @daily
// (@midnight), @hourly, and @every <duration>.
//
// Parse never panics (robfig's parser does, on TZ=UTC for instance; every
// call to it is guarded) and returns errors wrapping [ErrInvalidSpec] for a
// spec it cannot use, including:
//
//   - a spec that can never fire, such as 0 0 30 2 *, 0 0 31 4 * or one
//     with an empty list (",", which robfig accepts) for a field. The test is
//     exact, not a search: a spec can fire when every time field allows a
//     value and one of its months has a day, up to the 29th for February,
//     that matches the day fields in a month starting on some weekday; every
//     month starts on every weekday in leap and in common years. An accepted spec fires at least once every
//     eight years (0 0 29 2 * goes from 2096 to 2104), and Next searches nine
//     years ahead, so it never gives up on one;
//   - @every below one second (robfig rounds it up silently).
//
// # Time zones
//
// Wall times are read in the location given with [WithLocation] (time.Local
// by default), or in the zone of a CRON_TZ=<zone> or TZ=<zone> prefix, which
// wins. Next returns times in that location. [Every] uses its anchor's
// location.
//
// # Daylight saving time
//
// When clocks change, some wall times do not happen (the spring-forward gap,
// 02:00-02:59 in New York on 8 March 2026) and some happen twice (01:00-01:59
// on 1 November 2026, first EDT then EST). Schedules follow two rules,
// chosen by the hour field:
//
//   - Fixed-hour specs, whose hour field leaves out some hour (30 2 * * *,
//     0 9-17 * * *, 0 */2 * * *, @daily, @weekly, @monthly, @yearly): each
//     matching wall time runs once on its day. A wall time inside a gap runs
//     once at the first instant after the gap, when the clock shows the new
//     time (03:00 EDT for 02:30 in New York; several wall times in one gap
//     run together, once). A wall time that happens twice runs at its first
//     occurrence only (01:30 EDT, not 01:30 EST). "Run at 02:30 every day"
//     means once a day, never skipped and never doubled, as cronie and
//     FreeBSD's cron -s treat jobs that run less often than hourly.
//
//   - Every-hour specs, whose hour field allows all 24 hours (*, */1, 0-23,
//     @hourly): they follow real time, running at every instant whose wall
//     time matches. Wall times in a gap do not run, and a repeated wall time
//     runs at both occurrences. With the usual one-hour shift this is once
//     per real hour: 0 * * * * runs at 01:00 EST then 03:00 EDT on the
//     spring-forward day (an hour apart; there is no 02:00 run, which would
//     coincide with 03:00), and at 01:00 EDT then 01:00 EST on the fall-back
//     day (an hour apart, nothing doubled). These jobs are about elapsed
//     time: making up a missing wall time would run twice at one instant,
//     and skipping a repeated one would leave a real hour without a run.
//     With Australia/Lord_Howe's 30-minute shift the rule is the same, so
//     the real spacing across a change is 30 or 90 minutes.
//
// @every and [Every] run at a fixed rate in real time: anchor + k·d for
// k = 0, 1, 2, …, whatever the zone does. The anchor is the one given to
// [Every] or [WithAnchor]; without one, activations are aligned to multiples
// of d since the zero time, as time.Time.Truncate does.
//
// These rules are checked against a brute-force model (every minute, or
// every second, of two days around transitions in ten zones) by a rapid
// property test, and against robfig's SpecSchedule.Next where no offset
// changes. robfig v3.0.1 itself skips 02:30 on the spring-forward day and
// runs 30 1 * * * twice on the fall-back day; this package does neither.
//
// # Missed runs
//
// [Due] takes the scheduled time of a job's last run, the current time and a
// [Missed] policy: [Skip] (the default: wait for the next time), [RunOnce]
// (run the latest missed time once) or [RunEach] (the latest n missed times,
// oldest first, n at most [MaxRunEach]). It returns the runs to make up and
// the next time. It never enumerates the missed times: a job that fires
// every second and was down for a year costs three or four calls of Next
// under RunOnce.
//
// The [Engine] applies these policies to late and missed runs; see below.
//
// # Engine
//
// An [Engine] runs jobs. A job has a name, a [Schedule] and a handler, a
// [Func] that receives the scheduled time of its run:
//
//	e, err := cron.New(cron.Config{})
//	// handle err
//	err = e.RegisterSpec(ctx, "backup", "30 2 * * *", backup,
//		cron.WithLocation(berlin), cron.WithMissed(cron.RunOnce))
//	// handle err
//	err = e.Start(ctx)
//	// ... until shutdown:
//	err = e.Stop(ctx) // waits for the runs in progress
//
// The engine keeps exactly one entry per job on a queue of a sched
// scheduler (its own, or one it shares through [Config.Scheduler]), the job's
// name being the entry's distinct key. The entry waits, delayed, until the
// job's next time; a worker runs the handler; when the run ends the same
// entry is snoozed until the job's following time. Hence:
//
//   - Runs of one job never overlap: the next run is planned only when the
//     run in progress has ended.
//   - A run is never taken for a stuck one: its lease is renewed while it
//     runs (sched's AutoRenew), since a Func has no Job to heartbeat with,
//     so a recovery reaper on a shared scheduler leaves a long run alone.
//     A Func that hangs holds its job, as it holds Stop: give runs a
//     deadline of their own (context.WithTimeout in the Func).
//   - The entry is the engine's: on a shared scheduler, whose Inspector
//     (and schedhttp) sees the engine's queue, a Delete there leaves the
//     live entries of registered jobs, and DeleteID, Disable and Enable of
//     one return sched.ErrWrongState. Unregister, Pause and Resume the job
//     instead. The queue is paused until Start and from Stop; resumed there
//     meanwhile, it is paused again when an entry comes due, and nothing
//     runs.
//   - There is no goroutine and no timer per job: the scheduler's delay heap,
//     loops and workers serve all jobs. 10,000 jobs on a scheduler with 16
//     workers run on its 19 goroutines, as 100 jobs do (TestEngine_Scale).
//   - Jobs run at their schedule's times, including the daylight-saving
//     rules above: this is checked over simulated days with
//     testing/synctest, for every kind of spec, in several zones.
//
// Late and missed runs. A run that cannot start at its time (every worker
// busy, the governor holding work back, the engine not started yet) starts
// late. Once the following time of the schedule has passed as well, the
// times that passed are missed, and the job's [Missed] policy ([WithMissed])
// decides what runs: [Skip] (the default) waits for the next time, [RunOnce]
// runs the latest missed time, [RunEach] the latest n, oldest first. After a
// run, every time that passed during it was missed. The missed runs that
// are kept start at once, one after the other. Given the scheduled time of
// the last run of a previous process ([WithLastRun]), a job makes up the runs
// missed while the process was down, when it is registered.
//
// Managing jobs. [Engine.Update] replaces a job's schedule: the job next runs
// at the new schedule's first time after the update (or, during a run,
// after the run's end), and nothing of the new schedule's past is made up.
// [Engine.Pause] stops a job until [Engine.Resume]; times that fall while a
// job is paused are never made up. [Engine.Unregister] removes a job: a run
// in progress finishes, with its context not cancelled, and nothing runs
// after it. [Engine.Jobs] lists the jobs with their next time, the
// scheduled time of their last run and its outcome. All of these may be
// called while the job runs, and from handlers.
//
// Failures. A handler's error, panic (recovered with its stack) or
// runtime.Goexit is recorded as the job's last outcome and never stops later
// runs. Runs are not retried unless the job asks, with [WithRetry]; a retry
// never delays the job's next time.
//
// A [Schedule] whose Next panics, or calls runtime.Goexit on a goroutine of
// the scheduler (deciding a job's next time at a dispatch, at the end of a
// run, or in the walk over missed runs), stops its job until
// [Engine.Update]: the panic, or an error wrapping [scope.ErrGoexit]
// ("Schedule.Next called runtime.Goexit"), is joined to the job's last
// outcome ([JobInfo].LastErr) and Next is not called again. Missed runs
// already decided still run; after a Goexit the run that was due does not
// start, and the scheduler replaces its worker. A Next that calls
// runtime.Goexit in a management call ends the caller's goroutine and
// leaves the engine whole, its locks free: [Engine.Register] has registered
// nothing, [Engine.Update] has changed nothing, and [Engine.Resume] has
// resumed the job and stopped it as above. A Clock or metric of a shared
// [Config.Scheduler] that calls runtime.Goexit (package sched contains it,
// and then no longer calls it) loses nothing either: at the end of a run,
// the run is recorded and the job goes on at its next times; in a
// management call, which it ends, the job's entry is placed on the
// goroutine's way out. A LeaderFunc that calls runtime.Goexit skips the run
// (and is logged); a retry policy's Delay runs on a goroutine of its own,
// and one that ends it gives no retry. A Logger that panics or calls
// runtime.Goexit is not contained.
//
// Leadership. [Config.LeaderFunc] decides, each time a run is due, whether
// this process runs it; a multi-machine deployment plugs its election in
// there. Times at which this process is not the leader are skipped here and
// never made up.
//
// Shutdown. [Engine.Stop] drains: no run starts after it is called, and it
// waits for the runs in progress.
//
// # Cost
//
//   - Next of a parsed spec jumps to each field's next allowed value (a
//     month's allowed days are one bit mask) instead of stepping through
//     hours and days as robfig's SpecSchedule.Next does: its steps are
//     bounded by the months it passes, nine years' worth at most, and the
//     zone's offset changes among them; it allocates nothing.
//   - Every's Next runs in constant time and allocates nothing.
//   - Parse runs robfig's parser, which it wraps, and the exact test that
//     the spec can fire; it allocates the schedule.
//   - Due calls Next a number of times that grows with the logarithm of
//     the outage, not with the missed activations (see [Due]); under Skip
//     it allocates nothing, otherwise the slice of runs it returns.
//
// The engine starts no goroutine per job or per run: every job runs on
// its scheduler's fixed set of goroutines (8 × GOMAXPROCS workers by
// default), whatever the number of jobs, and a registered job holds one
// entry of its queue. gocron starts a goroutine per run, and in its
// singleton mode keeps one per job.
//
// Figures: bench/RESULTS.md in the repository, section 6.1 for the engine
// against github.com/go-co-op/gocron/v2 (BenchmarkCron_Register and
// BenchmarkCron_Run in the bench module), section 6.2 for the schedules
// against robfig/cron/v3 (BenchmarkParse, BenchmarkSpec_Next,
// BenchmarkEvery_Next and BenchmarkDue), each in the same run.
package cron
