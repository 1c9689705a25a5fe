package schedtest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/scope"
)

func testTakeOrder(t *testing.T, f *fixture) {
	f.add("low1")
	f.add("high1", priority(9))
	f.add("low2")
	f.add("mid", priority(5))
	f.add("high2", priority(9))
	cs, s := f.wantTake(3, "high1", "high2", "mid")
	f.succeed(cs, s)
	cs, s = f.wantTake(10, "low1", "low2")
	f.succeed(cs, s)
}

func testTakeDoesNotWait(t *testing.T, f *fixture) {
	f.wantTake(4)
	f.add("later", runAt(f.now.Add(time.Second)))
	f.wantTake(4)
	if _, err := f.b.Take(f.ctx, scope.New(), sched.TakeRequest{Now: f.now, Max: 0}, nil); err == nil {
		t.Error("Take of 0 entries succeeded")
	}
	s := scope.New()
	s.Close(scope.Succeeded())
	f.add("now")
	if cs, err := f.b.Take(f.ctx, s, sched.TakeRequest{Now: f.now, Max: 1}, nil); err == nil || len(cs) != 0 {
		t.Errorf("Take into a closed scope = %v, %v; want an error and nothing", keys(cs), err)
	}
	f.wantTake(1, "now") // still there
}

func testDelayed(t *testing.T, f *fixture) {
	f.add("b", runAt(f.now.Add(2*time.Second)))
	f.add("a", runAt(f.now.Add(time.Second)))
	f.add("c", runAt(f.now.Add(2*time.Second)))
	f.add("past", runAt(f.now.Add(-time.Second))) // pending at once
	f.counts(sched.Counts{Delayed: 3, Pending: 1})
	next, ok, err := f.b.Promote(f.ctx, f.now)
	if err != nil || !ok || !next.Equal(f.now.Add(time.Second)) {
		t.Fatalf("Promote = %v, %v, %v; want the time of a", next, ok, err)
	}
	f.wantTake(10, "past")
	f.now = f.now.Add(time.Second)
	notified := f.notified
	if next, ok, _ := f.b.Promote(f.ctx, f.now); !ok || !next.Equal(f.now.Add(time.Second)) {
		t.Errorf("Promote at a's time = %v, %v", next, ok)
	}
	if f.notified == notified {
		t.Error("promoting did not notify")
	}
	f.counts(sched.Counts{Delayed: 2, Pending: 1, Awaiting: 1})
	f.now = f.now.Add(time.Second)
	// Take promotes too; entries due together keep the order they were
	// added in.
	f.wantTake(10, "a", "b", "c")
	if _, ok, _ := f.b.Promote(f.ctx, f.now); ok {
		t.Error("Promote with nothing delayed reported a time")
	}
}

func testFailedScope(t *testing.T, f *fixture) {
	for _, k := range []string{"a", "b", "c", "d"} {
		f.add(k)
	}
	cs, s := f.wantTake(2, "a", "b")
	f.run(&cs[0], sched.Outcome{Kind: sched.OutcomeSucceeded})
	if err := f.b.Start(f.ctx, &cs[1], f.now, time.Time{}); err != nil {
		t.Fatal(err)
	}
	s.Close(scope.Failed(errors.New("worker died")))
	// b goes back before c and d; a succeeded and stays done.
	cs, s = f.wantTake(10, "b", "c", "d")
	if cs[0].Reruns != 1 || cs[0].Attempts != 0 || cs[1].Reruns != 0 {
		t.Errorf("b after a cut-short run: reruns %d attempts %d; c reruns %d", cs[0].Reruns, cs[0].Attempts, cs[1].Reruns)
	}
	s.Close(scope.Failed(errors.New("again, before any started")))
	cs, s = f.wantTake(10, "b", "c", "d")
	if cs[1].Reruns != 0 {
		t.Errorf("an entry never started counted a rerun: %d", cs[1].Reruns)
	}
	f.succeed(cs, s)
	f.counts(sched.Counts{Succeeded: 4})
}

func testUnsettledAtSuccess(t *testing.T, f *fixture) {
	f.add("a")
	f.add("b")
	_, s := f.wantTake(1, "a")
	s.Close(scope.Succeeded()) // never settled: back at its place
	f.counts(sched.Counts{Pending: 2})
	cs, s := f.wantTake(2, "a", "b")
	f.succeed(cs, s)
}

func testOutcomes(t *testing.T, f *fixture) {
	for _, k := range []string{"ok", "retry", "fail", "snooze", "rerun", "cancel", "poison", "after"} {
		f.add(k)
	}
	cs, s := f.wantTake(7, "ok", "retry", "fail", "snooze", "rerun", "cancel", "poison")
	at := f.now.Add(time.Minute)
	runErr := &sched.RunError{Attempt: 1, At: f.now, Message: "boom", Type: "*errors.errorString"}
	outcomes := []sched.Outcome{
		{Kind: sched.OutcomeSucceeded},
		{Kind: sched.OutcomeRetry, At: at, Err: runErr},
		{Kind: sched.OutcomeFailed, Err: runErr},
		{Kind: sched.OutcomeSnooze, At: at},
		{Kind: sched.OutcomeRerun},
		{Kind: sched.OutcomeCancelled},
		{Kind: sched.OutcomePoisoned, Err: runErr},
	}
	for i := range cs {
		f.run(&cs[i], outcomes[i])
	}
	s.Close(scope.Succeeded())
	f.counts(sched.Counts{Succeeded: 1, Delayed: 2, Failed: 1, Pending: 2, Cancelled: 1, Poisoned: 1})
	// The rerun is back at its place, ahead of "after".
	cs, s = f.wantTake(10, "rerun", "after")
	if cs[0].Reruns != 1 || cs[0].Attempts != 0 {
		t.Errorf("rerun: reruns %d attempts %d", cs[0].Reruns, cs[0].Attempts)
	}
	f.succeed(cs, s)
	byKey := map[string]sched.Entry[Payload, string]{}
	for e, err := range f.b.List(f.ctx, sched.Filter[Payload, string]{}) {
		if err != nil {
			t.Fatal(err)
		}
		byKey[e.Key] = e
	}
	check := func(key string, state sched.State, attempts, snoozes int, runAt time.Time, errs int) {
		t.Helper()
		e := byKey[key]
		if e.State != state || e.Attempts != attempts || e.Snoozes != snoozes || !e.RunAt.Equal(runAt) || len(e.Errors) != errs {
			t.Errorf("%s: %v attempts %d snoozes %d runAt %v errors %d; want %v %d %d %v %d",
				key, e.State, e.Attempts, e.Snoozes, e.RunAt, len(e.Errors), state, attempts, snoozes, runAt, errs)
		}
	}
	check("ok", sched.StateSucceeded, 1, 0, time.Time{}, 0)
	check("retry", sched.StateDelayed, 1, 0, at, 1)
	check("fail", sched.StateFailed, 1, 0, time.Time{}, 1)
	check("snooze", sched.StateDelayed, 0, 1, at, 0)
	check("cancel", sched.StateCancelled, 1, 0, time.Time{}, 0)
	check("poison", sched.StatePoisoned, 0, 0, time.Time{}, 1)
	if e := byKey["fail"]; e.Errors[0].Message != "boom" || e.FinishedAt.IsZero() {
		t.Errorf("the failed entry keeps %+v, finished %v", e.Errors, e.FinishedAt)
	}
	// The retried and snoozed entries run again at their time.
	f.now = at
	cs, s = f.wantTake(10, "retry", "snooze")
	if cs[0].Attempts != 1 || cs[1].Attempts != 0 {
		t.Errorf("attempts before the next run: retry %d, snooze %d", cs[0].Attempts, cs[1].Attempts)
	}
	f.succeed(cs, s)
}

func testFencing(t *testing.T, f *fixture) {
	f.add("a")
	cs, s := f.wantTake(1, "a")
	stale := cs[0]
	stale.Gen--
	if err := f.b.Start(f.ctx, &stale, f.now, time.Time{}); !errors.Is(err, sched.ErrStale) {
		t.Errorf("Start of a stale generation = %v", err)
	}
	f.run(&cs[0], sched.Outcome{Kind: sched.OutcomeRerun})
	if err := f.b.Settle(f.ctx, &cs[0], sched.Outcome{Kind: sched.OutcomeSucceeded, Finished: f.now}); !errors.Is(err, sched.ErrStale) {
		t.Errorf("a second Settle of one run = %v, want ErrStale", err)
	}
	if err := f.b.Renew(f.ctx, cs[0].ID, cs[0].Gen, f.now.Add(time.Hour)); !errors.Is(err, sched.ErrStale) {
		t.Errorf("Renew of a settled run = %v, want ErrStale", err)
	}
	if err := f.b.Progress(f.ctx, cs[0].ID, cs[0].Gen, sched.Progress{Done: 1}); !errors.Is(err, sched.ErrStale) {
		t.Errorf("Progress of a settled run = %v, want ErrStale", err)
	}
	s.Close(scope.Succeeded())
	next, s2 := f.wantTake(1, "a")
	if next[0].Gen <= cs[0].Gen {
		t.Errorf("a new run's generation %d is not above the last one's %d", next[0].Gen, cs[0].Gen)
	}
	if err := f.b.Start(f.ctx, &next[0], f.now, time.Time{}); err != nil {
		t.Fatal(err)
	}
	// The earlier run, late, while the new one runs: its Renew and
	// Progress are stale and change nothing.
	if err := f.b.Renew(f.ctx, cs[0].ID, cs[0].Gen, f.now.Add(time.Hour)); !errors.Is(err, sched.ErrStale) {
		t.Errorf("Renew of an earlier run while a new one runs = %v, want ErrStale", err)
	}
	if exp, _ := f.b.Expired(f.ctx, f.now.Add(2*time.Hour), nil); len(exp) != 0 {
		t.Errorf("a stale Renew gave the new run, which has no lease, one: Expired = %v", keys(exp))
	}
	if err := f.b.Progress(f.ctx, cs[0].ID, cs[0].Gen, sched.Progress{Done: 5}); !errors.Is(err, sched.ErrStale) {
		t.Errorf("Progress of an earlier run while a new one runs = %v, want ErrStale", err)
	}
	if e, err := f.b.Get(f.ctx, cs[0].ID); err != nil || e.Progress.Done == 5 {
		t.Errorf("Get = progress %+v, %v; a stale Progress was recorded", e.Progress, err)
	}
	if err := f.b.Settle(f.ctx, &cs[0], sched.Outcome{Kind: sched.OutcomeFailed, Finished: f.now}); !errors.Is(err, sched.ErrStale) {
		t.Errorf("a late Settle of an earlier run = %v, want ErrStale", err)
	}
	if err := f.b.Settle(f.ctx, &sched.Claim[Payload, string]{ID: 1 << 40}, sched.Outcome{Kind: sched.OutcomeSucceeded}); !errors.Is(err, sched.ErrNotFound) {
		t.Errorf("Settle of an unknown entry = %v, want ErrNotFound", err)
	}
	if err := f.b.Settle(f.ctx, &next[0], sched.Outcome{Kind: sched.OutcomeSucceeded, Finished: f.now}); err != nil {
		t.Fatal(err)
	}
	s2.Close(scope.Succeeded())
	f.counts(sched.Counts{Succeeded: 1})
}

// testDoneContexts checks that Start, Settle, Renew and Progress do not
// refuse a done context: the scheduler calls them under the run's context,
// and settles under it the runs StopAndCancel cancelled.
func testDoneContexts(t *testing.T, f *fixture) {
	id, _ := f.add("a")
	done, cancel := context.WithCancel(f.ctx)
	cancel()
	s := scope.New()
	cs, err := f.b.Take(f.ctx, s, sched.TakeRequest{Now: f.now, Max: 1, LeaseUntil: f.now.Add(time.Minute)}, nil)
	if err != nil || len(cs) != 1 {
		t.Fatal(keys(cs), err)
	}
	if err := f.b.Start(done, &cs[0], f.now, f.now.Add(time.Minute)); err != nil {
		t.Errorf("Start under a done context = %v, want nil", err)
	}
	if err := f.b.Renew(done, id, cs[0].Gen, f.now.Add(time.Hour)); err != nil {
		t.Errorf("Renew under a done context = %v, want nil", err)
	}
	if err := f.b.Progress(done, id, cs[0].Gen, sched.Progress{Done: 1}); err != nil {
		t.Errorf("Progress under a done context = %v, want nil", err)
	}
	if err := f.b.Settle(done, &cs[0], sched.Outcome{Kind: sched.OutcomeRerun, Finished: f.now}); err != nil {
		t.Errorf("Settle under a done context = %v, want nil", err)
	}
	s.Close(scope.Succeeded())
	f.counts(sched.Counts{Pending: 1})
	if e, err := f.b.Get(f.ctx, id); err != nil || e.Reruns != 1 {
		t.Errorf("Get = %d reruns, %v; want the rerun settled under a done context", e.Reruns, err)
	}
}

func testGroups(t *testing.T, f *fixture) {
	g := f.regroup()
	g.add("a1", group("a"))
	g.add("b1", group("b"))
	g.add("a2", group("a"))
	g.add("solo")
	g.add("a3", group("a"))
	cs, s := g.wantTake(2, "a1", "a2") // one group, in order, up to max
	// While a is busy, its third entry waits; b and solo do not.
	bs, bsc := g.wantTake(10, "b1")
	ss, ssc := g.wantTake(10, "solo")
	g.wantTake(10)
	g.succeed(cs, s)
	rest, rs := g.wantTake(10, "a3")
	g.succeed(bs, bsc)
	g.succeed(ss, ssc)
	g.succeed(rest, rs)
	g.counts(sched.Counts{Succeeded: 5})

	// Entries of a group put back by a failed scope keep their order
	// within it.
	g.add("c1", group("c"))
	g.add("c2", group("c"))
	_, fs := g.wantTake(10, "c1", "c2")
	fs.Close(scope.Failed(errors.New("put back")))
	again, as := g.wantTake(10, "c1", "c2")
	g.succeed(again, as)
	g.counts(sched.Counts{Succeeded: 7})

	// Groups are taken by priority too, highest first, as entries without
	// one are.
	g.add("low1", group("low"))
	g.add("high1", group("high"), priority(9))
	g.add("mid", priority(5))
	for _, k := range []string{"high1", "mid", "low1"} {
		cs, s := g.wantTake(10, k)
		g.succeed(cs, s)
	}

	// A queue not opened as Grouped refuses an entry with a group.
	e := sched.NewEntry[Payload, string]{Key: "g1", Priority: 1, Group: "a", Now: f.now}
	if _, added, err := f.b.Add(f.ctx, e); !errors.Is(err, sched.ErrInvalid) || added {
		t.Errorf("Add of a grouped entry to an ungrouped queue = %v, %v; want an error wrapping ErrInvalid", added, err)
	}
	f.counts(sched.Counts{})
}

func testDisabled(t *testing.T, f *fixture) {
	a, _ := f.add("a", disabled)
	f.add("b")
	f.wantTake(10, "b")
	if err := f.b.SetDisabled(f.ctx, a, false); err != nil {
		t.Fatal(err)
	}
	cs, s := f.wantTake(10, "a")
	if err := f.b.SetDisabled(f.ctx, a, true); err != nil { // disabled while awaiting
		t.Fatal(err)
	}
	if err := f.b.Start(f.ctx, &cs[0], f.now, time.Time{}); err == nil {
		t.Error("a disabled entry started")
	}
	s.Close(scope.Succeeded()) // not run: back to pending, and disabled
	f.wantTake(10)
	if err := f.b.SetDisabled(f.ctx, 1<<40, true); !errors.Is(err, sched.ErrNotFound) {
		t.Errorf("SetDisabled of an unknown entry = %v", err)
	}
	f.counts(sched.Counts{Pending: 1, Awaiting: 1, Disabled: 1})
}

func testLeases(t *testing.T, f *fixture) {
	f.add("a")
	f.add("b")
	s := scope.New()
	cs, err := f.b.Take(f.ctx, s, sched.TakeRequest{Now: f.now, Max: 2, LeaseUntil: f.now.Add(time.Minute)}, nil)
	if err != nil || len(cs) != 2 {
		t.Fatal(keys(cs), err)
	}
	if err := f.b.Renew(f.ctx, cs[1].ID, cs[1].Gen, f.now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	exp, err := f.b.Expired(f.ctx, f.now.Add(2*time.Minute), nil)
	if err != nil || len(exp) != 1 || exp[0].Key != "a" || exp[0].Gen != cs[0].Gen {
		t.Errorf("Expired after the first lease = %v, %v; want a at its generation", keys(exp), err)
	}
	if exp, _ := f.b.Expired(f.ctx, f.now, nil); len(exp) != 0 {
		t.Errorf("Expired before any lease ended = %v", keys(exp))
	}
	if exp, _ := f.b.Expired(f.ctx, f.now.Add(time.Minute), nil); len(exp) != 0 {
		t.Errorf("Expired at the instant a's lease ends = %v; want none: a lease that ends at now did not end before it", keys(exp))
	}
	// A rescue fenced by the cutoff at which a reaper found the claim
	// lapsed: after a renewal past it (another process's run beat since),
	// it is stale and changes nothing.
	cutoff := f.now.Add(2 * time.Minute)
	if err := f.b.Renew(f.ctx, cs[0].ID, cs[0].Gen, f.now.Add(3*time.Minute)); err != nil {
		t.Fatal(err)
	}
	rescue := sched.Outcome{Kind: sched.OutcomeRerun, Finished: cutoff, Rescued: true, LapsedBefore: cutoff}
	if err := f.b.Settle(f.ctx, &cs[0], rescue); !errors.Is(err, sched.ErrStale) {
		t.Errorf("rescue of a claim renewed past the reaper's cutoff = %v, want ErrStale", err)
	}
	f.counts(sched.Counts{Awaiting: 2})
	// Started with a lease that ends before the cutoff, it is lapsed
	// there again: the rescue settles it, pending again, with a rerun and
	// a rescue counted.
	if err := f.b.Start(f.ctx, &cs[0], f.now, f.now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := f.b.Settle(f.ctx, &cs[0], rescue); err != nil {
		t.Errorf("rescue of a claim whose lease still ends before the reaper's cutoff = %v, want it settled", err)
	}
	f.run(&cs[1], sched.Outcome{Kind: sched.OutcomeSucceeded})
	if err := s.Close(scope.Succeeded()); err != nil {
		t.Fatal(err)
	}
	f.counts(sched.Counts{Pending: 1, Succeeded: 1})
	again, s := f.wantTake(1, "a")
	if again[0].Rescues != 1 || again[0].Reruns != 1 || again[0].Attempts != 0 {
		t.Errorf("a after its rescue: %d rescues, %d reruns, %d attempts; want 1, 1 and 0", again[0].Rescues, again[0].Reruns, again[0].Attempts)
	}
	f.succeed(again, s)
	if exp, _ := f.b.Expired(f.ctx, f.now.Add(2*time.Hour), nil); len(exp) != 0 {
		t.Errorf("settled entries expire: %v", keys(exp))
	}
}

// testClaimsAndRequeues checks what the other tests take on trust: a
// claim carries its entry's payload and retry policy; Start's lease
// replaces the take's, and Expired reports the run when it lapses;
// Progress and the start's time are recorded and Get returns the payload;
// and a rerun or a scope's close that puts an entry back notifies.
func testClaimsAndRequeues(t *testing.T, f *fixture) {
	policy := &sched.RetryPolicy{MaxRetries: 7}
	id, _ := f.add("a", func(e *sched.NewEntry[Payload, string]) { e.Retry = policy })
	s := scope.New()
	cs, err := f.b.Take(f.ctx, s, sched.TakeRequest{Now: f.now, Max: 1, LeaseUntil: f.now.Add(time.Minute)}, nil)
	if err != nil || len(cs) != 1 {
		t.Fatal(keys(cs), err)
	}
	if cs[0].Payload != (Payload{N: 1, Note: "a"}) || cs[0].Retry == nil || cs[0].Retry.MaxRetries != 7 {
		t.Errorf("claim payload %+v, retry %+v; want the entry's", cs[0].Payload, cs[0].Retry)
	}
	if err := f.b.Start(f.ctx, &cs[0], f.now, f.now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if exp, _ := f.b.Expired(f.ctx, f.now.Add(2*time.Minute), nil); len(exp) != 0 {
		t.Errorf("a run started with a lease of an hour expired after the take's lease: %v", keys(exp))
	}
	if exp, _ := f.b.Expired(f.ctx, f.now.Add(2*time.Hour), nil); len(exp) != 1 || exp[0].ID != id || exp[0].Gen != cs[0].Gen {
		t.Errorf("Expired after a running run's lease = %v; want a at its generation", keys(exp))
	}
	if err := f.b.Progress(f.ctx, id, cs[0].Gen, sched.Progress{Done: 3, Total: 9}); err != nil {
		t.Fatal(err)
	}
	if e, err := f.b.Get(f.ctx, id); err != nil || e.Progress.Done != 3 || e.Payload.Note != "a" || !e.StartedAt.Equal(f.now) {
		t.Errorf("Get = progress %+v, payload %+v, started %v, %v; want the progress reported, the payload and the start's time", e.Progress, e.Payload, e.StartedAt, err)
	}
	notified := f.notified
	if err := f.b.Settle(f.ctx, &cs[0], sched.Outcome{Kind: sched.OutcomeRerun, Finished: f.now}); err != nil {
		t.Fatal(err)
	}
	s.Close(scope.Succeeded())
	if f.notified == notified {
		t.Error("a rerun did not notify")
	}
	_, s = f.wantTake(1, "a")
	notified = f.notified
	s.Close(scope.Failed(errors.New("worker died")))
	if f.notified == notified {
		t.Error("a failed scope that put an entry back did not notify")
	}
}

// testPendingWhileTakeOpen checks that an entry that becomes pending again
// while the take that ran it is still open (a retry that came due, a
// Retry of an entry settled earlier in the batch) can be taken at once, at
// the tail, behind what was pending before it: the take's other entries
// may run for long, while workers are idle.
func testPendingWhileTakeOpen(t *testing.T, f *fixture) {
	f.add("a")
	bID, _ := f.add("b")
	cs, s := f.wantTake(3, "a", "b")
	defer s.Close(scope.Succeeded())
	f.add("c")
	f.run(&cs[0], sched.Outcome{Kind: sched.OutcomeRetry, At: f.now.Add(time.Second)})
	f.now = f.now.Add(time.Second) // a's retry is due: pending after c
	f.wantTake(1, "c")
	f.wantTake(1, "a")
	f.run(&cs[1], sched.Outcome{Kind: sched.OutcomeSucceeded})
	if n, err := f.b.Retry(f.ctx, sched.Filter[Payload, string]{After: bID - 1, Until: bID}, false, f.now); err != nil || n != 1 {
		t.Fatalf("Retry of b = %d, %v; want 1", n, err)
	}
	f.wantTake(1, "b")
}

// testStartWithZeroLease checks Start's lease: "with the lease running
// until leaseUntil (the zero time: the take's lease, if any, stays as it
// was)". A run taken with a lease of a minute and started with the zero
// time expires when the take's lease ends. (The contract said once that
// the zero time gave the run no lease; Memory kept the take's.)
func testStartWithZeroLease(t *testing.T, f *fixture) {
	f.add("a")
	s := scope.New()
	defer s.Close(scope.Succeeded())
	cs, err := f.b.Take(f.ctx, s, sched.TakeRequest{Now: f.now, Max: 1, LeaseUntil: f.now.Add(time.Minute)}, nil)
	if err != nil || len(cs) != 1 {
		t.Fatal(keys(cs), err)
	}
	if err := f.b.Start(f.ctx, &cs[0], f.now, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if exp, _ := f.b.Expired(f.ctx, f.now.Add(30*time.Second), nil); len(exp) != 0 {
		t.Errorf("a run started with the zero lease expired before the take's lease ended: %v", keys(exp))
	}
	if exp, _ := f.b.Expired(f.ctx, f.now.Add(2*time.Minute), nil); len(exp) != 1 || exp[0].Gen != cs[0].Gen {
		t.Errorf("a run started with the zero lease, after the take's lease ended: Expired = %v; want a at its generation", keys(exp))
	}
}
