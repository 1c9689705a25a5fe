package cron

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"github.com/jobkit/jobkit/sched"
)

// The property: for random schedules, missed-run policies, retry policies,
// run durations, failures and panics, and random registrations,
// unregistrations, pauses, resumes and updates over simulated time,
//
//   - at every step (after each operation, and every few seconds), every
//     registered job has exactly one live entry in the engine's queue, an
//     unregistered name at most one (its run still going), and a paused
//     job's entry is disabled; and
//   - the runs (scheduled time, start, end) are those of a model that
//     follows the engine's documented rules, enumerating activations with
//     Next (not Due), one job at a time.
//
// Times are staggered so that nothing the test does coincides with a run
// starting or ending (which would make the order of the two a matter of
// goroutine scheduling): activations and run durations are whole seconds;
// operations happen at +250ms, checks at +500ms, and the k-th registration
// at +(750+k)ms, so that catch-up runs after a registration (and retries
// of them) end at an offset of their own.

type propSchedule struct {
	desc string
	s    Schedule
}

type propBehaviour struct {
	dur     time.Duration // whole seconds
	outcome int           // 0 success, 1 error, 2 panic
}

type propOp struct {
	at      time.Time
	kind    string // register, unregister, pause, resume, update
	name    string
	s       propSchedule
	bound   int // missed-run policy: 0 Skip, else RunEach(bound)
	retry   *sched.RetryPolicy
	lastRun time.Time
}

func (o propOp) String() string {
	s := fmt.Sprintf("%s %s %s", o.at.Format("15:04:05.000"), o.kind, o.name)
	if o.kind == "register" || o.kind == "update" {
		s += " " + o.s.desc
	}
	if o.kind == "register" {
		s += fmt.Sprintf(" bound=%d", o.bound)
		if o.retry != nil {
			s += fmt.Sprintf(" retry=%d×%v", o.retry.MaxRetries, o.retry.Base)
		}
		if !o.lastRun.IsZero() {
			s += " last=" + o.lastRun.Format("15:04:05")
		}
	}
	return s
}

var propBase = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

func drawSchedule(t *rapid.T, label string) propSchedule {
	specs := []string{
		"*/2 * * * * *", "*/3 * * * * *", "*/5 * * * * *", "*/7 * * * * *", "*/10 * * * * *",
		"*/15 * * * * *", "0,1,2 * * * * *", "0,20,21 * * * * *", "* * * * *", "*/2 * * * *",
	}
	if rapid.Bool().Draw(t, label+"-every") {
		d := time.Duration(rapid.SampledFrom([]int{2, 3, 5, 11, 45, 61}).Draw(t, label+"-d")) * time.Second
		s, err := Every(d, propBase)
		if err != nil {
			t.Fatal(err)
		}
		return propSchedule{"every " + d.String(), s}
	}
	spec := rapid.SampledFrom(specs).Draw(t, label+"-spec")
	s, err := Parse(spec, WithLocation(time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	return propSchedule{spec, s}
}

// drawScenario draws the jobs' behaviours and the operations.
func drawScenario(t *rapid.T) (names []string, behave map[string][]propBehaviour, ops []propOp, end time.Time) {
	n := rapid.IntRange(1, 3).Draw(t, "jobs")
	behave = make(map[string][]propBehaviour)
	registered := make(map[string]bool)
	regs := 0
	register := func(name string, at time.Time) propOp {
		o := propOp{
			at: at.Add(time.Duration(750+regs) * time.Millisecond), kind: "register", name: name,
			s:     drawSchedule(t, name),
			bound: rapid.IntRange(0, 4).Draw(t, name+"-bound"),
		}
		regs++
		if rapid.IntRange(0, 2).Draw(t, name+"-retry?") == 0 {
			o.retry = &sched.RetryPolicy{
				MaxRetries: rapid.IntRange(1, 2).Draw(t, name+"-retries"),
				Base:       time.Duration(rapid.IntRange(1, 4).Draw(t, name+"-base")) * time.Second,
			}
		}
		if rapid.IntRange(0, 2).Draw(t, name+"-last?") == 0 {
			o.lastRun = at.Add(-time.Duration(rapid.IntRange(1, 600).Draw(t, name+"-last")) * time.Second)
		}
		registered[name] = true
		return o
	}
	start := propBase.Add(time.Hour)
	for i := range n {
		name := fmt.Sprintf("j%d", i)
		names = append(names, name)
		behave[name] = rapid.SliceOfN(rapid.Custom(func(t *rapid.T) propBehaviour {
			return propBehaviour{
				dur:     time.Duration(rapid.SampledFrom([]int{0, 0, 1, 1, 2, 3, 5, 8, 13, 30}).Draw(t, "dur")) * time.Second,
				outcome: rapid.SampledFrom([]int{0, 0, 0, 1, 2}).Draw(t, "outcome"),
			}
		}), 1, 20).Draw(t, name+"-behaviour")
		ops = append(ops, register(name, start))
	}
	at := start
	for range rapid.IntRange(0, 12).Draw(t, "ops") {
		at = at.Add(time.Duration(rapid.IntRange(1, 90).Draw(t, "gap")) * time.Second)
		name := rapid.SampledFrom(names).Draw(t, "name")
		if !registered[name] {
			ops = append(ops, register(name, at))
			continue
		}
		o := propOp{at: at.Add(250 * time.Millisecond), name: name,
			kind: rapid.SampledFrom([]string{"pause", "resume", "update", "unregister"}).Draw(t, "kind")}
		switch o.kind {
		case "update":
			o.s = drawSchedule(t, "update")
		case "unregister":
			registered[name] = false
		}
		ops = append(ops, o)
	}
	end = at.Add(time.Duration(rapid.IntRange(10, 300).Draw(t, "tail"))*time.Second + 500*time.Millisecond)
	return names, behave, ops, end
}

// modelJob is one registration of a job in the model.
type modelJob struct {
	s                Schedule
	bound            int
	retry            *sched.RetryPolicy
	next             time.Time
	catchup          []time.Time
	retryOf, retryAt time.Time
	attempt          int
	paused, rebase   bool
}

// advance: every activation before now that did not run is missed; the
// latest bound of them wait to run.
func (j *modelJob) advance(now time.Time) {
	for !j.next.IsZero() && j.next.Before(now) {
		j.catchup = append(j.catchup, j.next)
		j.next = j.s.Next(j.next)
	}
	if len(j.catchup) > j.bound {
		j.catchup = j.catchup[len(j.catchup)-j.bound:]
	}
}

func (j *modelJob) drop() {
	j.catchup = nil
	j.retryOf, j.retryAt, j.attempt = time.Time{}, time.Time{}, 0
}

func (j *modelJob) wake(now time.Time) time.Time {
	switch {
	case !j.retryAt.IsZero():
		return j.retryAt
	case len(j.catchup) > 0:
		return now
	}
	return j.next
}

// modelName is the model of one name: its registration and its entry's run.
type modelName struct {
	cur     *modelJob
	running bool
	runBy   *modelJob
	runS    time.Time
	runEnd  time.Time
	attempt int
	fail    bool
	n       int // runs started, for the behaviour
	runs    []runRecord
}

type runRecord struct{ Scheduled, Start, End time.Time }

// simulate runs the model of one name through its operations until end,
// calling check(now, state) at each operation.
func simulate(ops []propOp, behave []propBehaviour, end time.Time, check func(time.Time, *modelName)) *modelName {
	st := &modelName{}
	var now time.Time
	for oi := 0; ; {
		var tOp time.Time
		if oi < len(ops) {
			tOp = ops[oi].at
		}
		var tRun time.Time
		switch {
		case st.running:
			tRun = st.runEnd
		case st.cur != nil && !st.cur.paused:
			tRun = st.cur.wake(now)
		}
		if !tRun.IsZero() && tRun.Before(now) {
			tRun = now
		}
		switch {
		case !tRun.IsZero() && (tOp.IsZero() || tRun.Before(tOp)) && tRun.Before(end):
			now = tRun
			if st.running {
				st.endRun(now)
			} else {
				st.beginRun(now, behave)
			}
		case !tOp.IsZero() && tOp.Before(end):
			now = tOp
			st.apply(ops[oi])
			oi++
			if check != nil {
				check(now, st)
			}
		default:
			return st
		}
	}
}

func (st *modelName) beginRun(now time.Time, behave []propBehaviour) {
	j := st.cur
	var s time.Time
	attempt := 1
	switch {
	case !j.retryAt.IsZero():
		s, attempt = j.retryOf, j.attempt+1
		j.retryOf, j.retryAt, j.attempt = time.Time{}, time.Time{}, 0
	case len(j.catchup) > 0:
		s = j.catchup[0]
		j.catchup = j.catchup[1:]
	default:
		s = j.next
		j.next = j.s.Next(s)
	}
	b := behave[st.n%len(behave)]
	st.n++
	st.running, st.runBy, st.runS, st.attempt = true, j, s, attempt
	st.runEnd, st.fail = now.Add(b.dur), b.outcome != 0
	st.runs = append(st.runs, runRecord{s, now, st.runEnd})
}

func (st *modelName) endRun(now time.Time) {
	st.running = false
	j, cur := st.runBy, st.cur
	switch {
	case cur == nil:
	case cur.rebase:
		cur.rebase = false
		cur.drop()
		cur.next = cur.s.Next(now)
	default:
		cur.advance(now)
		if st.fail && cur == j && j.retry != nil && st.attempt <= j.retry.MaxRetries && !j.paused && len(j.catchup) == 0 {
			at := now.Add(j.retry.Base << (st.attempt - 1))
			if j.next.IsZero() || at.Before(j.next) {
				j.retryOf, j.retryAt, j.attempt = st.runS, at, st.attempt
			}
		}
	}
}

func (st *modelName) apply(o propOp) {
	switch o.kind {
	case "register":
		j := &modelJob{s: o.s.s, bound: o.bound, retry: o.retry}
		if o.lastRun.IsZero() {
			j.next = j.s.Next(o.at)
		} else {
			j.next = j.s.Next(o.lastRun)
			j.advance(o.at)
		}
		st.cur = j
	case "unregister":
		st.cur = nil
	case "pause":
		if !st.cur.paused {
			// Pause drops a waiting retry (see WithRetry).
			st.cur.retryOf, st.cur.retryAt, st.cur.attempt = time.Time{}, time.Time{}, 0
		}
		st.cur.paused = true
	case "resume":
		if !st.cur.paused {
			return // resuming a job that is not paused does nothing
		}
		st.cur.paused = false
		st.cur.drop()
		st.cur.next = st.cur.s.Next(o.at)
	case "update":
		st.cur.s = o.s.s
		st.cur.drop()
		st.cur.next = o.s.s.Next(o.at)
		st.cur.rebase = st.running && st.runBy == st.cur
	}
}

func TestEngineProperty(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(rt *rapid.T) {
		names, behave, ops, end := drawScenario(rt)
		rapid.SyncTest(rt, func(rt *rapid.T) { checkScenario(rt, names, behave, ops, end) })
	})
}

func checkScenario(t *rapid.T, names []string, behave map[string][]propBehaviour, ops []propOp, end time.Time) {
	ctx := context.Background()
	time.Sleep(time.Until(propBase))
	e, err := New(Config{Workers: 8})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	got := make(map[string][]runRecord)
	fn := func(name string) Func {
		return func(ctx context.Context, at time.Time) error {
			mu.Lock()
			i := len(got[name])
			got[name] = append(got[name], runRecord{Scheduled: at, Start: time.Now()})
			mu.Unlock()
			b := behave[name][i%len(behave[name])]
			time.Sleep(b.dur)
			mu.Lock()
			got[name][i].End = time.Now()
			mu.Unlock()
			switch b.outcome {
			case 1:
				return errors.New("failed")
			case 2:
				panic("panicked")
			}
			return nil
		}
	}

	// Checks: after each operation, and every 7 seconds.
	checks := slices.Clone(ops)
	for c := ops[0].at.Truncate(time.Second).Add(500 * time.Millisecond); c.Before(end); c = c.Add(7 * time.Second) {
		checks = append(checks, propOp{at: c, kind: "check"})
	}
	sort.SliceStable(checks, func(i, k int) bool { return checks[i].at.Before(checks[k].at) })

	byName := make(map[string][]propOp)
	for _, o := range ops {
		byName[o.name] = append(byName[o.name], o)
	}
	for _, o := range checks {
		time.Sleep(time.Until(o.at))
		var err error
		switch o.kind {
		case "register":
			var opts []Option
			if o.bound > 0 {
				m, err := RunEach(o.bound)
				if err != nil {
					t.Fatal(err)
				}
				opts = append(opts, WithMissed(m))
			}
			if o.retry != nil {
				opts = append(opts, WithRetry(*o.retry))
			}
			if !o.lastRun.IsZero() {
				opts = append(opts, WithLastRun(o.lastRun))
			}
			err = e.Register(ctx, o.name, o.s.s, fn(o.name), opts...)
		case "unregister":
			err = e.Unregister(ctx, o.name)
		case "pause":
			err = e.Pause(ctx, o.name)
		case "resume":
			err = e.Resume(ctx, o.name)
		case "update":
			err = e.Update(ctx, o.name, o.s.s)
		}
		if err != nil {
			t.Fatalf("%v: %v", o, err)
		}
		synctest.Wait()
		checkEntries(t, e, names, byName, behave, o.at)
	}
	time.Sleep(time.Until(end))
	infos := e.Jobs()
	if err := e.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	for _, name := range names {
		st := simulate(byName[name], behave[name], end, nil)
		mu.Lock()
		g := got[name]
		mu.Unlock()
		if d := diffRuns(g, st.runs); d != "" {
			t.Fatalf("%s: runs differ from the model: %s\nops:\n%s", name, d, opsString(byName[name]))
		}
		info, registered := findInfo(infos, name)
		if registered != (st.cur != nil) {
			t.Fatalf("%s: registered %v, model %v", name, registered, st.cur != nil)
		}
		if registered && (!info.Next.Equal(st.cur.next) || info.CatchUp != len(st.cur.catchup) ||
			info.Paused != st.cur.paused || !info.RetryAt.Equal(st.cur.retryAt)) {
			t.Fatalf("%s: at the end %+v; model next %v, %d catch-ups, paused %v, retry at %v\nops:\n%s",
				name, info, st.cur.next, len(st.cur.catchup), st.cur.paused, st.cur.retryAt, opsString(byName[name]))
		}
	}
}

// checkEntries checks, at now, that each registered name has exactly one
// live entry, disabled if the job is paused, and an unregistered one an
// entry only while its last run goes on.
func checkEntries(t *rapid.T, e *Engine, names []string, byName map[string][]propOp, behave map[string][]propBehaviour, now time.Time) {
	live := make(map[string][]sched.Entry[string, string])
	for ent, err := range e.store.List(context.Background(), sched.Filter[string, string]{
		States: []sched.State{sched.StateDelayed, sched.StatePending, sched.StateAwaiting, sched.StateRunning},
	}) {
		if err != nil {
			t.Fatal(err)
		}
		live[ent.Key] = append(live[ent.Key], ent)
	}
	for _, name := range names {
		// The model's state just after now.
		var ops []propOp
		for _, o := range byName[name] {
			if !o.at.After(now) {
				ops = append(ops, o)
			}
		}
		st := simulate(ops, behave[name], now.Add(time.Millisecond), nil)
		want := 0
		if st.cur != nil || (st.running && st.runEnd.After(now)) {
			want = 1
		}
		if len(live[name]) != want {
			t.Fatalf("%s at %s: %d live entries %+v, want %d\nops:\n%s", name, now.Format("15:04:05.000"), len(live[name]), live[name], want, opsString(ops))
		}
		if st.cur != nil && live[name][0].Disabled != st.cur.paused {
			t.Fatalf("%s at %s: entry %+v, job paused %v", name, now.Format("15:04:05.000"), live[name][0], st.cur.paused)
		}
	}
}

func findInfo(infos []JobInfo, name string) (JobInfo, bool) {
	for _, i := range infos {
		if i.Name == name {
			return i, true
		}
	}
	return JobInfo{}, false
}

func diffRuns(got, want []runRecord) string {
	for i := range max(len(got), len(want)) {
		if i >= len(got) || i >= len(want) || !got[i].Scheduled.Equal(want[i].Scheduled) ||
			!got[i].Start.Equal(want[i].Start) || !got[i].End.Equal(want[i].End) {
			return fmt.Sprintf("run %d of %d (model %d):\n got %s\nwant %s", i, len(got), len(want), runsString(got, i), runsString(want, i))
		}
	}
	return ""
}

func runsString(rs []runRecord, i int) string {
	var b strings.Builder
	for k := max(0, i-3); k < min(len(rs), i+2); k++ {
		fmt.Fprintf(&b, "[%d %s@%s..%s] ", k, rs[k].Scheduled.Format("15:04:05.000"), rs[k].Start.Format("15:04:05.000"), rs[k].End.Format("15:04:05.000"))
	}
	return b.String()
}

func opsString(ops []propOp) string {
	var b strings.Builder
	for _, o := range ops {
		fmt.Fprintln(&b, "  ", o)
	}
	return b.String()
}
