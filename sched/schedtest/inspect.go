package schedtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/scope"
)

// finish adds keys and runs each to outcome kind, one at a time, a second
// apart.
func (f *fixture) finish(kind sched.OutcomeKind, keys ...string) {
	f.t.Helper()
	for _, k := range keys {
		f.add(k)
		cs, s := f.wantTake(1, k)
		o := sched.Outcome{Kind: kind}
		if kind == sched.OutcomeFailed || kind == sched.OutcomePoisoned {
			o.Err = &sched.RunError{Attempt: 1, At: f.now, Message: "boom"}
		}
		f.run(&cs[0], o)
		s.Close(scope.Succeeded())
		f.now = f.now.Add(time.Second)
	}
}

func testRetention(t *testing.T, f *fixture) {
	g := f.with(sched.QueueInfo{Retention: sched.Retention{
		Succeeded: 10 * time.Second, MaxSucceeded: 3,
		Failed: time.Hour, MaxFailed: 2,
		Cancelled: 0, MaxCancelled: 10, // zero time: deleted at once
	}})
	g.finish(sched.OutcomeSucceeded, "s1", "s2", "s3", "s4") // s1 over the count
	g.finish(sched.OutcomeFailed, "f1", "f2")
	g.finish(sched.OutcomePoisoned, "p1") // failed and poisoned share a bound: f1 goes
	g.finish(sched.OutcomeCancelled, "c1")
	g.counts(sched.Counts{Succeeded: 3, Failed: 1, Poisoned: 1})
	g.totals(8, 3, 0) // s1 and f1 over their bounds, c1 at once
	var kept []string
	for e, err := range g.b.List(g.ctx, sched.Filter[Payload, string]{}) {
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, e.Key)
	}
	if want := []string{"s2", "s3", "s4", "f2", "p1"}; !slices.Equal(kept, want) {
		t.Errorf("kept %v, want %v", kept, want)
	}
	// s2 finished at t0+1s: it expires at t0+11s, s3 at +12s.
	next, ok, err := g.b.Expire(g.ctx, t0.Add(11*time.Second))
	if err != nil || !ok || !next.Equal(t0.Add(12*time.Second)) {
		t.Errorf("Expire at s2's end = %v, %v, %v; want s3's end next", next, ok, err)
	}
	g.counts(sched.Counts{Succeeded: 2, Failed: 1, Poisoned: 1})
	g.totals(8, 4, 0)
	if _, err := g.b.Get(g.ctx, 2); !errors.Is(err, sched.ErrNotFound) {
		t.Errorf("Get of an expired entry = %v", err)
	}
	if _, ok, _ := g.b.Expire(g.ctx, t0.Add(2*time.Hour)); ok {
		t.Error("entries left after every retention ended")
	}
	g.counts(sched.Counts{})
	g.totals(8, 8, 0)
	// A bound of zero keeps none, however long the time.
	none := f.with(sched.QueueInfo{Name: "q3", Retention: sched.Retention{Succeeded: time.Hour, Failed: time.Hour, Cancelled: time.Hour}})
	none.finish(sched.OutcomeSucceeded, "s")
	none.finish(sched.OutcomeFailed, "f")
	none.finish(sched.OutcomeCancelled, "c")
	none.counts(sched.Counts{})
}

func testBlockFailed(t *testing.T, f *fixture) {
	g := f.with(sched.QueueInfo{Retention: keep, BlockFailed: true})
	g.finish(sched.OutcomeFailed, "a")
	if _, ok := g.add("a"); ok {
		t.Error("a failed entry did not block its key")
	}
	f.finish(sched.OutcomeFailed, "a")
	if _, ok := f.add("a"); !ok {
		t.Error("without BlockFailed a failed entry blocks its key")
	}
}

func testList(t *testing.T, f *fixture) {
	for i := range 600 { // more than a page
		key := fmt.Sprintf("k%03d", i)
		switch i % 3 {
		case 0:
			f.add(key)
		case 1:
			f.add(key, runAt(f.now.Add(time.Hour)))
		default:
			f.add(key, disabled)
		}
		f.now = f.now.Add(time.Millisecond)
	}
	var ids []sched.ID
	var sawPayload bool
	for e, err := range f.b.List(f.ctx, sched.Filter[Payload, string]{}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
		sawPayload = sawPayload || e.Payload.Note != ""
	}
	if len(ids) != 600 || !slices.IsSorted(ids) || sawPayload {
		t.Errorf("List: %d entries, sorted %v, payloads %v; want 600, sorted, none", len(ids), slices.IsSorted(ids), sawPayload)
	}
	count := func(flt sched.Filter[Payload, string]) (n int) {
		for e, err := range f.b.List(f.ctx, flt) {
			if err != nil {
				t.Fatal(err)
			}
			if flt.Payloads && e.Payload.Note != e.Key {
				t.Errorf("payload of %s is %+v", e.Key, e.Payload)
			}
			n++
		}
		return n
	}
	for name, tc := range map[string]struct {
		f    sched.Filter[Payload, string]
		want int
	}{
		"delayed":    {sched.Filter[Payload, string]{States: []sched.State{sched.StateDelayed}}, 200},
		"pending":    {sched.Filter[Payload, string]{States: []sched.State{sched.StatePending}}, 400},
		"key prefix": {sched.Filter[Payload, string]{Key: func(k string) bool { return strings.HasPrefix(k, "k05") }}, 10},
		"after":      {sched.Filter[Payload, string]{After: ids[99]}, 500},
		"time range": {sched.Filter[Payload, string]{From: t0.Add(100 * time.Millisecond), To: t0.Add(200 * time.Millisecond)}, 100},
		"match":      {sched.Filter[Payload, string]{Payloads: true, Match: func(e *sched.Entry[Payload, string]) bool { return e.Payload.N == 4 && e.Disabled }}, 200},
	} {
		if got := count(tc.f); got != tc.want {
			t.Errorf("%s: %d entries, want %d", name, got, tc.want)
		}
	}
	// Stopping early, and a cancelled context: its error, and nothing else.
	n := 0
	for range f.b.List(f.ctx, sched.Filter[Payload, string]{}) {
		if n++; n == 3 {
			break
		}
	}
	cancelled, cancel := context.WithCancel(f.ctx)
	cancel()
	gotErr := false
	for e, err := range f.b.List(cancelled, sched.Filter[Payload, string]{}) {
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("List under a cancelled context yielded %v, %v; want its error alone", e.ID, err)
		}
		gotErr = true
	}
	if !gotErr {
		t.Error("List under a cancelled context yielded nothing, want its error")
	}
	// Entries added while a listing runs may or may not be seen; none is
	// seen twice.
	seen := map[sched.ID]bool{}
	for e, err := range f.b.List(f.ctx, sched.Filter[Payload, string]{}) {
		if err != nil {
			t.Fatal(err)
		}
		if seen[e.ID] {
			t.Fatalf("%d listed twice", e.ID)
		}
		seen[e.ID] = true
		if len(seen) == 10 {
			f.add("added while listing")
		}
	}
}

func testDeleteAndRetry(t *testing.T, f *fixture) {
	f.finish(sched.OutcomeFailed, "f1", "f2")
	f.finish(sched.OutcomeSucceeded, "s1")
	f.add("p")
	cs, s := f.take(1)           // p awaiting: neither deleted nor retried
	f.now = f.now.Add(time.Hour) // the retry comes an hour after the failures
	n, err := f.b.Retry(f.ctx, sched.Filter[Payload, string]{States: []sched.State{sched.StateFailed}}, true, f.now)
	if err != nil || n != 2 {
		t.Fatalf("Retry of failed = %d, %v", n, err)
	}
	f.counts(sched.Counts{Pending: 2, Awaiting: 1, Succeeded: 1})
	rc, rs := f.wantTake(5, "f1", "f2")
	for _, c := range rc {
		if !c.ReadyAt.Equal(f.now) {
			t.Errorf("%s retried at %v is ready at %v, want the retry's time", c.Key, f.now, c.ReadyAt)
		}
	}
	if rc[0].Attempts != 0 {
		t.Errorf("attempts after a Retry with reset: %d", rc[0].Attempts)
	}
	f.succeed(rc, rs)
	n, err = f.b.Delete(f.ctx, sched.Filter[Payload, string]{})
	if err != nil || n != 3 {
		t.Fatalf("Delete of everything = %d, %v; want the 3 not awaiting", n, err)
	}
	f.counts(sched.Counts{Awaiting: 1})
	f.totals(4, 0, 3)
	if _, ok := f.add("f1"); !ok {
		t.Error("a deleted key is still blocked")
	}
	f.succeed(cs, s)
	if _, err := f.b.Get(f.ctx, 1<<40); !errors.Is(err, sched.ErrNotFound) {
		t.Errorf("Get of an unknown ID = %v", err)
	}
}

func testUntilNotifyAndReset(t *testing.T, f *fixture) {
	// Until bounds List, Delete and Retry: the Inspector's DeleteID and
	// RetryID select one entry with After: id−1, Until: id.
	f.finish(sched.OutcomeFailed, "f1", "f2", "f3")
	one := func(id sched.ID) sched.Filter[Payload, string] {
		return sched.Filter[Payload, string]{After: id - 1, Until: id}
	}
	n := 0
	for _, err := range f.b.List(f.ctx, one(2)) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 1 {
		t.Errorf("List of After: 1, Until: 2 listed %d entries, want 1", n)
	}
	// Retry without reset keeps the attempts; it notifies.
	notified := f.notified
	if n, err := f.b.Retry(f.ctx, one(2), false, f.now); err != nil || n != 1 {
		t.Fatalf("Retry of one entry by Until = %d, %v; want 1", n, err)
	}
	if e, err := f.b.Get(f.ctx, 2); err != nil || e.State != sched.StatePending || e.Attempts != 1 {
		t.Errorf("after Retry without reset: %+v, %v; want pending with its 1 attempt", e, err)
	}
	if f.notified == notified {
		t.Error("Retry of a final entry did not notify")
	}
	if n, err := f.b.Delete(f.ctx, one(1)); err != nil || n != 1 {
		t.Fatalf("Delete of one entry by Until = %d, %v; want 1", n, err)
	}
	f.counts(sched.Counts{Pending: 1, Failed: 1})
	// Enabling a pending entry notifies: the scheduler does not poll.
	id, _ := f.add("d", disabled)
	notified = f.notified
	if err := f.b.SetDisabled(f.ctx, id, false); err != nil {
		t.Fatal(err)
	}
	if f.notified == notified {
		t.Error("enabling a pending entry did not notify")
	}
}
