package props

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"github.com/jobkit/jobkit/sched"
)

// TestSchedulerMatchesModel drives a scheduler with random adds (one at a
// time or several together, delayed or not, at random priorities), pauses,
// disables, cap changes, handler outcomes (success, failure, panic,
// permanent failure, snooze, cancel, rerun), deletes and the passing of
// time, in a synctest bubble, and after every step, once the scheduler is
// idle, compares it with a model:
//
//   - the scheduler goes idle: it does not spin (see spinClock);
//   - no entry runs twice at once, and no two entries of a group;
//   - the queue's cap is never exceeded, also by the rest of a batch
//     taken before it was lowered; a paused queue never starts a run, a
//     disabled entry never runs;
//   - with one worker taking one entry at a time, each run is the model's
//     first ready entry: highest priority, then first come (FIFO), an entry
//     put back keeping its place;
//   - nothing stalls: every ready entry that the cap and the workers allow
//     is running;
//   - each run is the attempt, after the reruns, that the model counts: a
//     failing entry runs again exactly at σ(n+1) = σ(n) + c·2ⁿ while it
//     has retries left, then fails with MaxRetries+1 attempts; snoozes and
//     reruns spend none, and an entry of a batch put back before it
//     started spends no rerun either;
//   - a delayed entry is not pending a nanosecond before its time (the
//     model looks then too, and takes fall just before due times);
//   - retention: final entries expire exactly at their state's TTL, and
//     beyond the most kept of their state the oldest at once; a deleted
//     entry is gone, a retried final one is pending again (at the tail,
//     with its attempts reset if asked) unless its key is taken;
//   - conservation: the queue's counts by state, and added = live +
//     retained + expired + deleted, equal the model's.
func TestSchedulerMatchesModel(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(rt *rapid.T) {
		rapid.SyncTest(rt, func(rt *rapid.T) {
			if failure := runSchedulerModel(rt); failure != "" {
				rt.Fatal(failure)
			}
		})
	})
}

// outcome is what the test tells a running handler to do.
type outcome uint8

const (
	succeed outcome = iota
	fail
	panics
	permanent
	snooze
	cancel
	rerun
	numOutcomes
)

func (o outcome) String() string {
	return [...]string{"succeed", "fail", "panic", "permanent", "snooze", "cancel", "rerun"}[o]
}

// mstate is a model entry's state.
type mstate uint8

const (
	mDelayed mstate = iota
	mPending
	mRunning
	mSucceeded
	mFailed
	mCancelled
	mPoisoned
	mDeleted
	mExpired
)

type mentry struct {
	key       int
	id        sched.ID
	state     mstate
	priority  int
	group     string
	seq       int       // place in its priority: lower runs first
	runAt     time.Time // while delayed
	attempts  int
	reruns    int
	disabled  bool
	lastStart time.Time
	finished  time.Time // when it reached a final state
	finSeq    int       // the order it reached it in, among entries that did
}

// The model's retention: final entries expire this long after they ended,
// or, beyond the most kept of their state (drawn for each run), the oldest
// of them at once.
const (
	keepSucceeded = 2 * time.Second
	keepFailed    = 3 * time.Second // poisoned too
	keepCancelled = time.Second
)

// expiry returns when the final entry e expires.
func (e *mentry) expiry() time.Time {
	switch e.state {
	case mSucceeded:
		return e.finished.Add(keepSucceeded)
	case mCancelled:
		return e.finished.Add(keepCancelled)
	}
	return e.finished.Add(keepFailed)
}

func (e *mentry) final() bool { return e.state >= mSucceeded && e.state <= mPoisoned }

// kept returns the state whose count the retention of final entries of
// state s is bounded by: a poisoned entry is kept as a failed one.
func kept(s mstate) mstate {
	if s == mPoisoned {
		return mFailed
	}
	return s
}

// run is a handler call that waits for the test's verdict.
type run struct {
	key     int
	attempt int
	reruns  int
	verdict chan outcome
}

func runSchedulerModel(rt *rapid.T) (failure string) {
	ctx := context.Background()
	const base = time.Second
	workers := rapid.IntRange(1, 3).Draw(rt, "workers")
	batch := rapid.IntRange(1, 2).Draw(rt, "batch")
	grouped := rapid.Bool().Draw(rt, "grouped")
	maxRetries := rapid.IntRange(0, 2).Draw(rt, "max retries")
	maxReruns := rapid.IntRange(1, 3).Draw(rt, "max reruns")
	maxKept := map[mstate]int{}
	for _, st := range []mstate{mSucceeded, mFailed, mCancelled} {
		maxKept[st] = rapid.SampledFrom([]int{1, 2, 1 << 20}).Draw(rt, "max kept")
	}
	ordered := workers == 1 && batch == 1 && !grouped // one run at a time, in take order

	var (
		mu       sync.Mutex
		waiting  = map[int]*run{} // running handlers by key
		started  []int            // keys in the order their runs started
		running  = map[int]int{}  // concurrent runs by key
		inGroup  = map[string]int{}
		problems []string
	)
	groupOf := func(k int) string {
		if !grouped || k%4 == 0 {
			return ""
		}
		return fmt.Sprintf("g%d", k%3)
	}
	fault := func(format string, args ...any) {
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	defClock, err := sched.New(sched.Config{}) // for its default clock's timers
	if err != nil {
		return err.Error()
	}
	clock := &spinClock{Clock: defClock.Clock(), release: make(chan struct{})}
	s, err := sched.New(sched.Config{Workers: workers, Loops: 1, Clock: clock})
	if err != nil {
		return err.Error()
	}
	// A queue with a Group function takes one unit a batch (an entry
	// without a group, or entries of one group): only a queue without one
	// takes batches of entries of no group.
	var group func(int) string
	if grouped {
		group = groupOf
	}
	retry := sched.RetryPolicy{MaxRetries: maxRetries, Base: base}
	q, err := sched.NewQueue(s, "model", sched.QueueConfig[int, int]{
		Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
			r := &run{key: j.Key, attempt: j.Attempt, reruns: j.Reruns, verdict: make(chan outcome)}
			g := groupOf(j.Key)
			mu.Lock()
			if running[j.Key]++; running[j.Key] > 1 {
				fault("key %d runs twice at once", j.Key)
			}
			if g != "" {
				if inGroup[g]++; inGroup[g] > 1 {
					fault("two entries of group %s run at once", g)
				}
			}
			waiting[j.Key] = r
			started = append(started, j.Key)
			mu.Unlock()
			v := <-r.verdict
			mu.Lock()
			running[j.Key]--
			if g != "" {
				inGroup[g]--
			}
			delete(waiting, j.Key)
			mu.Unlock()
			switch v {
			case fail:
				return errors.New("failed")
			case panics:
				panic("handler panic")
			case permanent:
				return sched.Permanent(errors.New("bad input"))
			case snooze:
				return sched.Snooze(base / 2)
			case cancel:
				return sched.Cancel(nil)
			case rerun:
				return sched.Rerun(errors.New("connection reset"))
			}
			return nil
		},
		BatchSize: batch,
		Retry:     &retry,
		MaxReruns: maxReruns,
		Group:     group,
		Retention: &sched.Retention{Succeeded: keepSucceeded, MaxSucceeded: maxKept[mSucceeded], Failed: keepFailed, MaxFailed: maxKept[mFailed], Cancelled: keepCancelled, MaxCancelled: maxKept[mCancelled]},
	})
	if err != nil {
		return err.Error()
	}
	if err := s.Start(ctx); err != nil {
		return err.Error()
	}
	defer func() {
		// Release every handler, then stop: nothing may be left behind.
		for {
			mu.Lock()
			var r *run
			for _, w := range waiting {
				r = w
				break
			}
			mu.Unlock()
			if r == nil {
				break
			}
			r.verdict <- succeed
			synctest.Wait()
		}
		// The readers the spin clock blocks go once Stop has cancelled
		// the loops.
		stopped := make(chan error, 1)
		go func() { stopped <- s.Stop(ctx) }()
		synctest.Wait()
		close(clock.release)
		if err := <-stopped; err != nil && failure == "" {
			failure = "Stop: " + err.Error()
		}
	}()

	model := map[int]*mentry{} // the latest entry of each key
	var all []*mentry          // every entry, for the counts
	seq := 0
	paused := false
	maxConc := 0 // no cap
	nextSeq := func() int { seq++; return seq }
	// hist is what the model saw happen to each key, for the FIFO check's
	// failure message: the check fails only for some interleavings, which
	// rapid cannot replay.
	t0 := time.Now()
	hist := map[int][]string{}
	note := func(e *mentry, what string) {
		hist[e.key] = append(hist[e.key], fmt.Sprintf("%v %s id %d seq %d state %d dis %v", time.Since(t0), what, e.id, e.seq, e.state, e.disabled))
	}
	live := func(e *mentry) bool { return e.state <= mRunning }
	// eligible returns the ready entries in the order they must run.
	eligible := func() []*mentry {
		var out []*mentry
		for _, e := range all {
			if e.state == mPending && !e.disabled {
				out = append(out, e)
			}
		}
		slices.SortFunc(out, func(a, b *mentry) int {
			if c := cmp.Compare(b.priority, a.priority); c != 0 {
				return c
			}
			return cmp.Compare(a.seq, b.seq)
		})
		return out
	}
	promote := func(now time.Time) {
		var due []*mentry
		for _, e := range all {
			if e.state == mDelayed && !e.runAt.After(now) {
				due = append(due, e)
			}
		}
		slices.SortFunc(due, func(a, b *mentry) int {
			if c := a.runAt.Compare(b.runAt); c != 0 {
				return c
			}
			return cmp.Compare(a.id, b.id)
		})
		for _, e := range due {
			e.state, e.seq = mPending, nextSeq()
			note(e, "promoted")
		}
		for _, e := range all {
			if e.final() && !e.expiry().After(now) {
				e.state = mExpired
			}
		}
	}

	// settle absorbs what the scheduler did since the last step: runs that
	// started. It checks each against the model.
	settle := func() string {
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if len(problems) > 0 {
			return problems[0]
		}
		if n := clock.reads.Swap(0); n > maxReads {
			return fmt.Sprintf("the scheduler does not go idle: the clock was read %d times since the last check (a hot loop)", n)
		}
		now := time.Now()
		for _, k := range started {
			e := model[k]
			switch {
			case e == nil || e.state != mPending:
				return fmt.Sprintf("key %d started in model state %v", k, e)
			case paused:
				return fmt.Sprintf("key %d started while the queue is paused", k)
			case e.disabled:
				return fmt.Sprintf("disabled key %d started", k)
			}
			if ordered {
				if first := eligible()[0]; first != e {
					return fmt.Sprintf("key %d (priority %d, seq %d) started before key %d (priority %d, seq %d)\nkey %d: %q\nkey %d: %q", k, e.priority, e.seq, first.key, first.priority, first.seq, k, hist[k], first.key, hist[first.key])
				}
			}
			if r := waiting[k]; r == nil || r.attempt != e.attempts+1 || r.reruns != e.reruns {
				if r == nil {
					return fmt.Sprintf("key %d started and is not running", k)
				}
				return fmt.Sprintf("key %d ran as attempt %d after %d reruns, model says attempt %d after %d", k, r.attempt, r.reruns, e.attempts+1, e.reruns)
			}
			e.state, e.lastStart = mRunning, now
			note(e, "started")
			if n := countState(all, mRunning); maxConc > 0 && n > maxConc {
				return fmt.Sprintf("%d running with a cap of %d", n, maxConc)
			}
		}
		started = started[:0]
		// Nothing stalls: with a worker free, the cap not reached and the
		// queue not paused, no ready entry is left waiting — unless all of
		// them are in groups that are busy.
		nRunning := countState(all, mRunning)
		if !paused && nRunning < workers && (maxConc == 0 || nRunning < maxConc) && batch == 1 {
			for _, e := range eligible() {
				if e.group == "" || !groupBusy(all, e.group) {
					return fmt.Sprintf("key %d is ready but not running (%d running, %d workers, cap %d)", e.key, nRunning, workers, maxConc)
				}
			}
		}
		// Conservation: the queue's counts are the model's.
		c, err := q.Counts(ctx)
		if err != nil {
			return err.Error()
		}
		want := sched.Counts{
			Delayed: countState(all, mDelayed), Running: nRunning,
			Succeeded: countState(all, mSucceeded), Failed: countState(all, mFailed),
			Cancelled: countState(all, mCancelled), Poisoned: countState(all, mPoisoned),
		}
		for _, e := range all {
			if e.disabled && live(e) {
				want.Disabled++
			}
		}
		if c.Added != len(all) || c.Added != c.Live()+c.Retained()+c.Expired+c.Deleted ||
			c.Expired != countState(all, mExpired) || c.Deleted != countState(all, mDeleted) {
			return fmt.Sprintf("counts %+v: model %d added, %d expired, %d deleted; or added ≠ live + retained + expired + deleted",
				c, len(all), countState(all, mExpired), countState(all, mDeleted))
		}
		c = c.States()
		gotWaiting, wantWaiting := c.Pending+c.Awaiting, countState(all, mPending)
		c.Pending, c.Awaiting = 0, 0
		if c != want || gotWaiting != wantWaiting {
			return fmt.Sprintf("counts %+v with %d pending or awaiting; model %+v with %d pending", c, gotWaiting, want, wantWaiting)
		}
		return ""
	}

	// drawAdd draws the options of an add; addModel checks the add of key
	// k, with those options, against the model and records it.
	type addOpts struct {
		opts     []sched.AddOption
		prio     int
		delay    time.Duration
		disabled bool
	}
	drawAdd := func(rt *rapid.T) addOpts {
		a := addOpts{prio: sched.MinPriority}
		if rapid.Bool().Draw(rt, "high priority") {
			a.prio = 5
			a.opts = append(a.opts, sched.WithPriority(a.prio))
		}
		if rapid.Bool().Draw(rt, "delayed") {
			a.delay = time.Duration(rapid.IntRange(1, 3).Draw(rt, "delay s")) * base
			a.opts = append(a.opts, sched.After(a.delay))
		}
		if a.disabled = rapid.IntRange(0, 9).Draw(rt, "disabled") == 0; a.disabled {
			a.opts = append(a.opts, sched.Disabled())
		}
		return a
	}
	addModel := func(k int, id sched.ID, added bool, a addOpts) string {
		old := model[k]
		if want := old == nil || !live(old); added != want {
			return fmt.Sprintf("add of %d: added %v; model says %v", k, added, want)
		}
		if !added {
			return ""
		}
		e := &mentry{key: k, id: id, priority: a.prio, group: groupOf(k), disabled: a.disabled}
		if a.delay > 0 {
			e.state, e.runAt = mDelayed, time.Now().Add(a.delay)
		} else {
			e.state, e.seq = mPending, nextSeq()
		}
		model[k] = e
		all = append(all, e)
		note(e, "added")
		return ""
	}

	keys := rapid.IntRange(0, 12)
	rt.Repeat(map[string]func(*rapid.T){
		"": func(rt *rapid.T) {
			if failure == "" {
				failure = settle()
			}
			if failure != "" {
				rt.Fatal(failure)
			}
		},
		"add": func(rt *rapid.T) {
			k := keys.Draw(rt, "key")
			a := drawAdd(rt)
			mu.Lock() // keep handlers from running while the model changes
			id, added, err := q.Add(ctx, k, a.opts...)
			if err != nil {
				failure = fmt.Sprintf("Add(%d): %v", k, err)
			} else {
				failure = addModel(k, id, added, a)
			}
			mu.Unlock()
		},
		"add all": func(rt *rapid.T) {
			// Entries that become ready together, which batches of more
			// than one are made of.
			ks := rapid.SliceOfN(keys, 2, 4).Draw(rt, "keys")
			a := drawAdd(rt)
			mu.Lock()
			defer mu.Unlock()
			res, err := q.AddAll(ctx, ks, a.opts...)
			if err != nil || len(res) != len(ks) {
				failure = fmt.Sprintf("AddAll(%v) = %v, %v", ks, res, err)
				return
			}
			for i, k := range ks {
				if failure = addModel(k, res[i].ID, res[i].Added, a); failure != "" {
					return
				}
			}
		},
		"finish": func(rt *rapid.T) {
			mu.Lock()
			ks := make([]int, 0, len(waiting))
			for k := range waiting {
				ks = append(ks, k)
			}
			mu.Unlock()
			if len(ks) == 0 {
				rt.Skip("nothing running")
			}
			slices.Sort(ks)
			k := rapid.SampledFrom(ks).Draw(rt, "running key")
			v := outcome(rapid.IntRange(0, int(numOutcomes)-1).Draw(rt, "outcome"))
			mu.Lock()
			r := waiting[k]
			mu.Unlock()
			e := model[k]
			r.verdict <- v
			synctest.Wait()
			now := time.Now()
			switch v {
			case succeed:
				e.state = mSucceeded
				e.attempts++
			case fail, panics:
				e.attempts++
				if e.attempts-1 < maxRetries {
					e.state, e.runAt = mDelayed, e.lastStart.Add(base<<(e.attempts-1))
				} else {
					e.state = mFailed
				}
			case permanent:
				e.attempts++
				e.state = mFailed
			case snooze:
				e.state, e.runAt = mDelayed, now.Add(base/2)
			case cancel:
				e.attempts++
				e.state = mCancelled
			case rerun:
				if e.reruns >= maxReruns {
					e.state = mPoisoned
				} else {
					e.reruns++
					e.state = mPending // at its place: its seq is kept
				}
			}
			if e.final() {
				// A final entry is enabled: disabling is for live ones,
				// and a retry runs it.
				e.finished, e.disabled, e.finSeq = now, false, nextSeq()
				// Beyond the most kept, the oldest expire.
				var same []*mentry
				for _, x := range all {
					if x.final() && kept(x.state) == kept(e.state) {
						same = append(same, x)
					}
				}
				slices.SortFunc(same, func(a, b *mentry) int {
					if c := a.finished.Compare(b.finished); c != 0 {
						return c
					}
					return cmp.Compare(a.finSeq, b.finSeq)
				})
				for _, x := range same[:max(len(same)-maxKept[kept(e.state)], 0)] {
					x.state = mExpired
				}
			}
			note(e, fmt.Sprintf("finished %d", v))
			promote(now)
		},
		"delete": func(rt *rapid.T) {
			if len(all) == 0 {
				rt.Skip("no entries")
			}
			e := rapid.SampledFrom(all).Draw(rt, "entry")
			mu.Lock()
			defer mu.Unlock()
			err := s.Inspector().DeleteID(ctx, "model", e.id)
			switch {
			case e.state == mExpired || e.state == mDeleted:
				if !errors.Is(err, sched.ErrNotFound) {
					failure = fmt.Sprintf("DeleteID of a gone entry = %v", err)
				}
			case e.state == mRunning:
				if !errors.Is(err, sched.ErrWrongState) {
					failure = fmt.Sprintf("DeleteID of a running entry = %v", err)
				}
			case e.state == mPending && errors.Is(err, sched.ErrWrongState):
				// Refused: it must be claimed in a batch behind a running
				// entry (the model does not tell pending from awaiting).
				if got, _ := q.Get(ctx, e.id); got.State != sched.StateAwaiting {
					failure = fmt.Sprintf("DeleteID of a %v entry = %v", got.State, err)
				}
			case err != nil:
				failure = fmt.Sprintf("DeleteID of a %d entry = %v", e.state, err)
			default:
				e.state = mDeleted
			}
		},
		"retry": func(rt *rapid.T) {
			if len(all) == 0 {
				rt.Skip("no entries")
			}
			e := rapid.SampledFrom(all).Draw(rt, "entry")
			reset := rapid.Bool().Draw(rt, "reset")
			mu.Lock()
			defer mu.Unlock()
			err := s.Inspector().RetryID(ctx, "model", e.id, reset)
			latest := model[e.key]
			switch {
			case e.state == mExpired || e.state == mDeleted:
				if !errors.Is(err, sched.ErrNotFound) {
					failure = fmt.Sprintf("RetryID of a gone entry = %v", err)
				}
			case !e.final() || (latest != e && live(latest)):
				if !errors.Is(err, sched.ErrWrongState) {
					failure = fmt.Sprintf("RetryID of a live entry, or of one whose key is taken = %v", err)
				}
			case err != nil:
				failure = fmt.Sprintf("RetryID of a final entry = %v", err)
			default:
				e.state, e.seq, e.finished = mPending, nextSeq(), time.Time{}
				if reset {
					e.attempts, e.reruns = 0, 0
				}
				model[e.key] = e
				note(e, "retried")
			}
		},
		"sleep": func(rt *rapid.T) {
			// Time passes due time by due time, so that what the scheduler
			// starts at each is checked against the model of that instant.
			// Steps of a quarter second make adds and runs coincide with
			// due times; a step short of one by a little has the next
			// operations (and the takes they cause) fall just before them.
			short := rapid.SampledFrom([]time.Duration{0, 0, time.Millisecond, base / 10}).Draw(rt, "short by")
			end := time.Now().Add(time.Duration(rapid.IntRange(1, 8).Draw(rt, "quarter seconds"))*base/4 - short)
			for {
				next := end
				for _, e := range all {
					if e.state == mDelayed && e.runAt.Before(next) {
						next = e.runAt
					}
					if e.final() && e.expiry().Before(next) {
						next = e.expiry()
					}
				}
				// Just before it, nothing due then has started or moved.
				time.Sleep(time.Until(next) - time.Nanosecond)
				if failure = settle(); failure != "" {
					rt.Fatal(failure)
				}
				time.Sleep(time.Until(next))
				mu.Lock()
				promote(time.Now())
				mu.Unlock()
				if next.Equal(end) {
					return
				}
				if failure = settle(); failure != "" {
					rt.Fatal(failure)
				}
			}
		},
		"pause or resume": func(rt *rapid.T) {
			if paused {
				q.Resume()
			} else {
				q.Pause()
			}
			paused = !paused
		},
		"disable or enable": func(rt *rapid.T) {
			k := keys.Draw(rt, "key")
			e := model[k]
			if e == nil || !live(e) {
				if err := q.Disable(ctx, sched.ID(1<<40)); !errors.Is(err, sched.ErrNotFound) {
					failure = fmt.Sprintf("Disable of an unknown ID = %v", err)
				}
				return
			}
			mu.Lock()
			defer mu.Unlock()
			var err error
			if e.disabled {
				err = q.Enable(ctx, e.id)
				if e.state == mPending {
					e.seq = nextSeq() // at the tail
				}
			} else {
				err = q.Disable(ctx, e.id)
			}
			if err != nil {
				failure = fmt.Sprintf("disable/enable %d: %v", k, err)
			}
			e.disabled = !e.disabled
			note(e, "toggled")
		},
		"set cap": func(rt *rapid.T) {
			maxConc = rapid.IntRange(0, 5).Draw(rt, "cap")
			if err := q.SetMaxConcurrency(maxConc); err != nil {
				failure = err.Error()
			}
		},
	})
	return failure
}

func countState(all []*mentry, s mstate) int {
	n := 0
	for _, e := range all {
		if e.state == s {
			n++
		}
	}
	return n
}

func groupBusy(all []*mentry, g string) bool {
	for _, e := range all {
		if e.group == g && e.state == mRunning {
			return true
		}
	}
	return false
}

// maxReads is the most reads of the clock the model's scheduler may make
// between two checks: a few for each entry that ran or became ready, far
// below it.
const maxReads = 1000

// spinClock is the bubble's clock, its reads counted. A scheduler in a hot
// loop (one that picks a queue and takes nothing, or takes a batch and puts
// it back, for ever) never lets synctest.Wait return, and the test would
// hang until its timeout; past maxReads since the last check the clock
// blocks its readers instead, durably, until the test ends, and the check
// reports the spin.
type spinClock struct {
	sched.Clock // the default clock: its timers
	reads       atomic.Int64
	release     chan struct{} // closed when the test ends
}

func (c *spinClock) Now() time.Time {
	if c.reads.Add(1) > maxReads {
		<-c.release
	}
	return time.Now()
}
