package cron_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/cron"
)

// engineModel returns the runs the engine's rules give a job with schedule s
// and a policy that keeps the latest b missed activations (0 for Skip),
// registered at reg (with its last run at lastRun, if not zero), whose run
// i takes dur(i), that start up to end, when workers are always free. It
// enumerates activations with Next, not with Due:
//
//   - after a run (and at registration), every activation before its end
//     that did not run is missed; the latest b of them run at once, one
//     after another, oldest first;
//   - otherwise the job runs at its next activation.
func engineModel(s cron.Schedule, b int, reg, lastRun time.Time, dur func(int) time.Duration, end time.Time) []runRec {
	var (
		next    time.Time
		catchup []time.Time
		out     []runRec
	)
	decide := func(now time.Time) {
		for !next.IsZero() && next.Before(now) {
			catchup = append(catchup, next)
			next = s.Next(next)
		}
		if len(catchup) > b {
			catchup = catchup[len(catchup)-b:]
		}
	}
	now := reg
	if lastRun.IsZero() {
		next = s.Next(reg)
	} else {
		next = s.Next(lastRun)
		decide(reg)
	}
	for {
		var at, start time.Time
		switch {
		case len(catchup) > 0:
			at, start = catchup[0], now
			catchup = catchup[1:]
		case !next.IsZero():
			at, start = next, next
			next = s.Next(next)
		default:
			return out
		}
		if start.After(end) {
			return out
		}
		now = start.Add(dur(len(out)))
		out = append(out, runRec{Scheduled: at, Start: start, End: now})
		decide(now)
	}
}

func policies(t *testing.T) map[string]cron.Missed {
	each3, err := cron.RunEach(3)
	must(t, err)
	return map[string]cron.Missed{"skip": cron.Skip, "once": cron.RunOnce, "each3": each3}
}

func bound(m cron.Missed) int {
	switch m.String() {
	case "Skip":
		return 0
	case "RunOnce":
		return 1
	}
	var n int
	fmt.Sscanf(m.String(), "RunEach(%d)", &n)
	return n
}

func equalRuns(t *testing.T, what string, got, want []runRec) {
	t.Helper()
	n := max(len(got), len(want))
	bad := 0
	for i := range n {
		var g, w runRec
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if !g.Scheduled.Equal(w.Scheduled) || !g.Start.Equal(w.Start) || !g.End.Equal(w.End) {
			if bad++; bad <= 5 {
				t.Errorf("%s: run %d: got for %v %v..%v, want for %v %v..%v", what, i,
					g.Scheduled.Format(layout), g.Start.Format(time.TimeOnly), g.End.Format(time.TimeOnly),
					w.Scheduled.Format(layout), w.Start.Format(time.TimeOnly), w.End.Format(time.TimeOnly))
			}
		}
	}
	if bad > 0 || len(got) != len(want) {
		t.Errorf("%s: %d runs differ; %d runs, want %d", what, bad, len(got), len(want))
	}
}

// Runs that take longer than the interval never overlap, and the runs
// follow the model of each missed-run policy: Skip waits for the next
// time, RunOnce runs the latest missed time at once, RunEach(3) the latest
// three, oldest first. Some runs end exactly on an activation (not missed).
func TestEngine_NoOverlapPolicies(t *testing.T) {
	t.Parallel()
	specs := []string{"* * * * *", "*/20 * * * * *", "@every 45s"}
	// Run i takes 0 to 4 minutes, in steps of 20 seconds.
	dur := func(i int) time.Duration { return time.Duration((i*37)%13) * 20 * time.Second }
	for _, spec := range specs {
		for name, m := range policies(t) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				reg := time.Date(2026, 5, 1, 8, 0, 0, 500e6, time.UTC)
				sleepUntil(reg)
				e := startEngine(t, cron.Config{})
				log := newRunLog()
				must(t, e.RegisterSpec(ctx, "job", spec, log.fn("job", sleeper(dur)),
					cron.WithLocation(time.UTC), cron.WithMissed(m)))
				end := reg.Add(12 * time.Hour)
				sleepUntil(end.Add(5 * time.Minute)) // the last run that starts by end has ended
				s := mustParse(t, spec, cron.WithLocation(time.UTC), cron.WithAnchor(reg))
				want := engineModel(s, bound(m), reg, time.Time{}, dur, end)
				got := log.get("job")
				for len(got) > 0 && got[len(got)-1].Start.After(end) {
					got = got[:len(got)-1]
				}
				equalRuns(t, spec+" "+name, got, want)
				if t.Failed() {
					t.Logf("%+v", e.Jobs())
				}
				log.checkNoOverlap(t)
				if len(want) < 100 {
					t.Errorf("%s %s: only %d runs: the test is too weak", spec, name, len(want))
				}
			})
		}
	}
}

// A new engine given the last run of the previous process makes up the runs
// missed while it was down, by the job's policy, at once and in order; then
// it follows the schedule.
func TestEngine_CatchUpAfterRestart(t *testing.T) {
	t.Parallel()
	each100, err := cron.RunEach(100)
	must(t, err)
	each3, err := cron.RunEach(3)
	must(t, err)
	cases := []struct {
		name, spec string
		policy     cron.Missed
		want       []string // scheduled@started, hh:mm
	}{
		{"skip", "0 * * * *", cron.Skip, []string{"16:00@16:00", "17:00@17:00", "18:00@18:00"}},
		{"once", "0 * * * *", cron.RunOnce, []string{"15:00@15:30", "16:00@16:00", "17:00@17:00", "18:00@18:00"}},
		{"each3", "0 * * * *", each3, []string{"13:00@15:30", "14:00@15:30", "15:00@15:30", "16:00@16:00", "17:00@17:00", "18:00@18:00"}},
		{"each100", "0 * * * *", each100, []string{"06:00@15:30", "07:00@15:30", "08:00@15:30", "09:00@15:30", "10:00@15:30",
			"11:00@15:30", "12:00@15:30", "13:00@15:30", "14:00@15:30", "15:00@15:30", "16:00@16:00", "17:00@17:00", "18:00@18:00"}},
		// @every counts from the last run: 05:00 + k·2h.
		{"every-once", "@every 2h", cron.RunOnce, []string{"15:00@15:30", "17:00@17:00"}},
		{"every-each3", "@every 2h", each3, []string{"11:00@15:30", "13:00@15:30", "15:00@15:30", "17:00@17:00"}},
	}
	for _, c := range cases {
		synctest.Test(t, func(t *testing.T) {
			ctx := context.Background()
			day := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
			sleepUntil(day.Add(30 * time.Second))

			// The first process runs the job from 00:00:30 to 05:30;
			// its last run is at 05:00.
			first, err := cron.New(cron.Config{})
			must(t, err)
			must(t, first.Start(ctx))
			log1 := newRunLog()
			// (@every 2h anchored at 01:00 runs at 01:00, 03:00, 05:00.)
			s := mustParse(t, c.spec, cron.WithLocation(time.UTC), cron.WithAnchor(day.Add(time.Hour)))
			must(t, first.Register(ctx, "job", s, log1.fn("job", nil), cron.WithMissed(c.policy)))
			sleepUntil(day.Add(5*time.Hour + 30*time.Minute))
			info, ok := first.Job("job")
			must(t, first.Stop(ctx))
			if !ok || !info.Last.Equal(day.Add(5*time.Hour)) {
				t.Fatalf("first process: Job = %+v, %v; want the last run at 05:00", info, ok)
			}

			// Down until 15:30; the second process is given the last run.
			sleepUntil(day.Add(15*time.Hour + 30*time.Minute))
			second := startEngine(t, cron.Config{})
			log2 := newRunLog()
			must(t, second.RegisterSpec(ctx, "job", c.spec, log2.fn("job", nil),
				cron.WithLocation(time.UTC), cron.WithMissed(c.policy), cron.WithLastRun(info.Last)))
			sleepUntil(day.Add(18*time.Hour + 30*time.Minute))
			var got []string
			for _, r := range log2.get("job") {
				got = append(got, r.Scheduled.Format("15:04")+"@"+r.Start.Format("15:04"))
			}
			equalStrings(t, c.name, got, c.want)
			log2.checkNoOverlap(t)
		})
	}
}
