// Package schedtest holds the conformance suite of sched.Backend: every
// backend runs TestBackend, so that the contract the scheduler relies on is
// written down in one place and checked the same way for each.
//
//	func TestConformance(t *testing.T) {
//		schedtest.TestBackend(t, func(t *testing.T) sched.Backend[schedtest.Payload, string] {
//			return mybackend.New[schedtest.Payload, string](testDB(t))
//		})
//	}
package schedtest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/scope"
)

// Payload is the payload of the entries the suite adds.
type Payload struct {
	N    int
	Note string
}

// Open returns a new, empty backend that has not been opened. The suite
// calls it at least once per subtest, and again, with the same t, in a
// subtest that needs a queue opened with other QueueInfo (Groups,
// BlockFailed, Retention): each call must return a backend of its own.
type Open func(t *testing.T) sched.Backend[Payload, string]

// t0 is the time the suite's clock starts at.
var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// keep keeps every final entry for an hour, up to 1,000 per state.
var keep = sched.Retention{
	Succeeded: time.Hour, Failed: time.Hour, Cancelled: time.Hour,
	MaxSucceeded: 1000, MaxFailed: 1000, MaxCancelled: 1000,
}

// TestBackend runs the conformance suite against the backends open returns.
func TestBackend(t *testing.T, open Open) {
	for _, tc := range []struct {
		name string
		run  func(*testing.T, *fixture)
	}{
		{"OpenTwice", testOpenTwice},
		{"AddRefusesLiveKeys", testAddRefusesLiveKeys},
		{"TakeByPriorityThenFIFO", testTakeOrder},
		{"TakeDoesNotWait", testTakeDoesNotWait},
		{"DelayedBecomePendingOnTime", testDelayed},
		{"FailedScopePutsBackInPlace", testFailedScope},
		{"UnsettledAtSuccessIsARerun", testUnsettledAtSuccess},
		{"Outcomes", testOutcomes},
		{"Fencing", testFencing},
		{"DoneContexts", testDoneContexts},
		{"Groups", testGroups},
		{"Disabled", testDisabled},
		{"Retention", testRetention},
		{"BlockFailed", testBlockFailed},
		{"ListInIDOrder", testList},
		{"DeleteAndRetry", testDeleteAndRetry},
		{"DeleteSelects", testDeleteSelects},
		{"RetrySelects", testRetrySelects},
		{"Leases", testLeases},
		{"StartWithZeroLease", testStartWithZeroLease},
		{"UntilNotifyAndReset", testUntilNotifyAndReset},
		{"ClaimsAndRequeues", testClaimsAndRequeues},
		{"PendingAgainWhileItsTakeIsOpen", testPendingWhileTakeOpen},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, newFixture(t, open, sched.QueueInfo{Name: "q", Retention: keep}))
		})
	}
}

// fixture is an opened backend and the suite's view of it.
type fixture struct {
	t        *testing.T
	open     Open
	b        sched.Backend[Payload, string]
	ctx      context.Context
	now      time.Time
	notified int
}

func newFixture(t *testing.T, open Open, info sched.QueueInfo) *fixture {
	t.Helper()
	f := &fixture{t: t, open: open, b: open(t), ctx: context.Background(), now: t0}
	info.Notify = func() { f.notified++ }
	if err := f.b.Open(info); err != nil {
		t.Fatalf("Open: %v", err)
	}
	return f
}

// with returns a fixture of a new backend opened with info.
func (f *fixture) with(info sched.QueueInfo) *fixture {
	if info.Name == "" {
		info.Name = "q2"
	}
	return newFixture(f.t, f.open, info)
}

// regroup returns a fixture of a new backend of a grouped queue.
func (f *fixture) regroup() *fixture { return f.with(sched.QueueInfo{Retention: keep, Grouped: true}) }

// add adds key with payload n and opts applied to the new entry; it
// returns the ID and whether it was added.
func (f *fixture) add(key string, opts ...func(*sched.NewEntry[Payload, string])) (sched.ID, bool) {
	f.t.Helper()
	e := sched.NewEntry[Payload, string]{Key: key, Payload: Payload{N: len(key), Note: key}, Priority: 1, Now: f.now}
	for _, o := range opts {
		o(&e)
	}
	id, ok, err := f.b.Add(f.ctx, e)
	if err != nil {
		f.t.Fatalf("Add(%q): %v", key, err)
	}
	return id, ok
}

func priority(p int) func(*sched.NewEntry[Payload, string]) {
	return func(e *sched.NewEntry[Payload, string]) { e.Priority = p }
}

func runAt(t time.Time) func(*sched.NewEntry[Payload, string]) {
	return func(e *sched.NewEntry[Payload, string]) { e.RunAt = t }
}

func group(g string) func(*sched.NewEntry[Payload, string]) {
	return func(e *sched.NewEntry[Payload, string]) { e.Group = g }
}

func disabled(e *sched.NewEntry[Payload, string]) { e.Disabled = true }

// take takes up to max entries in a new scope and returns their claims and
// the scope.
func (f *fixture) take(max int) ([]sched.Claim[Payload, string], *scope.Scope) {
	f.t.Helper()
	s := scope.New()
	cs, err := f.b.Take(f.ctx, s, sched.TakeRequest{Now: f.now, Max: max}, nil)
	if err != nil {
		f.t.Fatalf("Take: %v", err)
	}
	return cs, s
}

// keys returns the keys of cs.
func keys(cs []sched.Claim[Payload, string]) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Key
	}
	return out
}

// wantTake takes up to max entries, checks their keys and returns them.
func (f *fixture) wantTake(max int, want ...string) ([]sched.Claim[Payload, string], *scope.Scope) {
	f.t.Helper()
	cs, s := f.take(max)
	if got := keys(cs); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
		f.t.Fatalf("Take(%d) = %v, want %v", max, got, want)
	}
	return cs, s
}

// run starts and settles c with outcome o at the fixture's time.
func (f *fixture) run(c *sched.Claim[Payload, string], o sched.Outcome) {
	f.t.Helper()
	if err := f.b.Start(f.ctx, c, f.now, time.Time{}); err != nil {
		f.t.Fatalf("Start(%q): %v", c.Key, err)
	}
	if o.Finished.IsZero() {
		o.Finished = f.now
	}
	if err := f.b.Settle(f.ctx, c, o); err != nil {
		f.t.Fatalf("Settle(%q, %v): %v", c.Key, o.Kind, err)
	}
}

// succeed runs every claim of cs to success and closes s.
func (f *fixture) succeed(cs []sched.Claim[Payload, string], s *scope.Scope) {
	f.t.Helper()
	for i := range cs {
		f.run(&cs[i], sched.Outcome{Kind: sched.OutcomeSucceeded})
	}
	if err := s.Close(scope.Succeeded()); err != nil {
		f.t.Fatal(err)
	}
}

// counts checks the backend's counts.
func (f *fixture) counts(want sched.Counts) {
	f.t.Helper()
	got, err := f.b.Counts(f.ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	if got.States() != want {
		f.t.Fatalf("Counts = %+v, want %+v", got.States(), want)
	}
	if got.Added != got.Live()+got.Retained()+got.Expired+got.Deleted {
		f.t.Fatalf("Counts %+v: added ≠ live + retained + expired + deleted", got)
	}
}

// totals checks the backend's Added, Expired and Deleted: entries added,
// deleted as their retention ended, and deleted on request.
func (f *fixture) totals(added, expired, deleted int) {
	f.t.Helper()
	got, err := f.b.Counts(f.ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	if got.Added != added || got.Expired != expired || got.Deleted != deleted {
		f.t.Fatalf("Counts: added %d, expired %d, deleted %d; want %d, %d and %d", got.Added, got.Expired, got.Deleted, added, expired, deleted)
	}
}

func testOpenTwice(t *testing.T, f *fixture) {
	if err := f.b.Open(sched.QueueInfo{Name: "again"}); err == nil {
		t.Error("a second Open succeeded")
	}
}

func testAddRefusesLiveKeys(t *testing.T, f *fixture) {
	a, ok := f.add("a")
	if !ok || a == 0 {
		t.Fatalf("first add: %d, %v", a, ok)
	}
	if f.notified == 0 {
		t.Error("adding a pending entry did not notify")
	}
	if id, ok := f.add("a"); ok || id != a {
		t.Errorf("add of a pending key = %d, %v; want %d, false", id, ok, a)
	}
	b, _ := f.add("b", runAt(f.now.Add(time.Hour)))
	if id, ok := f.add("b"); ok || id != b {
		t.Errorf("add of a delayed key = %d, %v; want %d, false", id, ok, b)
	}
	c, _ := f.add("c", disabled)
	if id, ok := f.add("c"); ok || id != c {
		t.Errorf("add of a disabled key = %d, %v; want %d, false", id, ok, c)
	}
	cs, s := f.wantTake(5, "a")
	if id, ok := f.add("a"); ok || id != a {
		t.Errorf("add of an awaiting key = %d, %v; want %d, false", id, ok, a)
	}
	if err := f.b.Start(f.ctx, &cs[0], f.now, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if id, ok := f.add("a"); ok || id != a {
		t.Errorf("add of a running key = %d, %v; want %d, false", id, ok, a)
	}
	if err := f.b.Settle(f.ctx, &cs[0], sched.Outcome{Kind: sched.OutcomeSucceeded, Finished: f.now}); err != nil {
		t.Fatal(err)
	}
	s.Close(scope.Succeeded())
	a2, ok := f.add("a")
	if !ok || a2 <= c {
		t.Errorf("add of a finished key = %d, %v; want a new, larger ID than %d", a2, ok, c)
	}
	// c is pending and disabled.
	f.counts(sched.Counts{Pending: 2, Delayed: 1, Succeeded: 1, Disabled: 1})
	f.totals(4, 0, 0) // the adds refused are not counted
}
