package schedtest

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/scope"
)

// state returns the state of entry id, or 0 if it is not found.
func (f *fixture) state(id sched.ID) sched.State {
	f.t.Helper()
	e, err := f.b.Get(f.ctx, id)
	if errors.Is(err, sched.ErrNotFound) {
		return 0
	}
	if err != nil {
		f.t.Fatalf("Get(%d): %v", id, err)
	}
	return e.State
}

// later adds key a second after the last add, with opts, and returns its ID.
func (f *fixture) later(key string, opts ...func(*sched.NewEntry[Payload, string])) sched.ID {
	f.t.Helper()
	id, ok := f.add(key, opts...)
	if !ok {
		f.t.Fatalf("add of %q refused", key)
	}
	f.now = f.now.Add(time.Second)
	return id
}

// testDeleteSelects checks that Delete deletes what its filter selects,
// each of its fields (States, Key, From and To, Match, After) as List
// applies it, live entries as well as final ones, and only those: an
// operator's Delete of the failed entries must not take pending ones with
// it. A deleted pending entry is no longer taken, and a deleted disabled
// one no longer counted as disabled.
func testDeleteSelects(t *testing.T, f *fixture) {
	ids := map[string]sched.ID{}
	f.finish(sched.OutcomeFailed, "f1")      // 1, at t0
	f.finish(sched.OutcomeSucceeded, "s1")   // 2, at t0+1s
	ids["aw"] = f.later("aw", priority(9))   // 3, at t0+2s
	ids["run"] = f.later("run", priority(9)) // 4, at t0+3s
	cs, s := f.wantTake(2, "aw", "run")
	defer s.Close(scope.Succeeded())
	if err := f.b.Start(f.ctx, &cs[1], f.now, time.Time{}); err != nil {
		t.Fatal(err)
	}
	start := f.now // t0+4s
	for _, k := range []string{"d1", "p1", "x1", "x2", "p22", "p3", "p4"} {
		var opts []func(*sched.NewEntry[Payload, string])
		switch k {
		case "d1":
			opts = append(opts, runAt(f.now.Add(time.Hour)))
		case "x1":
			opts = append(opts, disabled)
		case "x2":
			opts = append(opts, disabled, runAt(f.now.Add(time.Hour)))
		}
		ids[k] = f.later(k, opts...)
	}
	f.counts(sched.Counts{Succeeded: 1, Failed: 1, Awaiting: 1, Running: 1, Delayed: 2, Pending: 5, Disabled: 2})
	all := []string{"f1", "s1", "aw", "run", "d1", "p1", "x1", "x2", "p22", "p3", "p4"}
	ids["f1"], ids["s1"] = 1, 2
	gone := map[string]bool{}
	for _, step := range []struct {
		name string
		f    sched.Filter[Payload, string]
		want []string
	}{
		{"After", sched.Filter[Payload, string]{After: ids["p3"]}, []string{"p4"}},
		{"States", sched.Filter[Payload, string]{States: []sched.State{sched.StateDelayed, sched.StateAwaiting, sched.StateRunning}}, []string{"d1", "x2"}},
		{"Key", sched.Filter[Payload, string]{Key: func(k string) bool { return strings.HasPrefix(k, "x") }}, []string{"x1"}},
		{"From and To", sched.Filter[Payload, string]{From: start.Add(time.Second), To: start.Add(5 * time.Second)}, []string{"p1", "p22"}},
		{"Match", sched.Filter[Payload, string]{Payloads: true, Match: func(e *sched.Entry[Payload, string]) bool { return strings.HasSuffix(e.Payload.Note, "1") }}, []string{"f1", "s1"}},
	} {
		n, err := f.b.Delete(f.ctx, step.f)
		if err != nil {
			t.Fatalf("Delete by %s: %v", step.name, err)
		}
		for _, k := range step.want {
			gone[k] = true
		}
		var left, wantLeft []string
		for _, k := range all {
			if f.state(ids[k]) != 0 {
				left = append(left, k)
			}
			if !gone[k] {
				wantLeft = append(wantLeft, k)
			}
		}
		if n != len(step.want) || !slices.Equal(left, wantLeft) {
			t.Fatalf("Delete by %s = %d, leaving %v; want %d (%v), leaving %v", step.name, n, left, len(step.want), step.want, wantLeft)
		}
	}
	f.counts(sched.Counts{Awaiting: 1, Running: 1, Pending: 1})
	f.totals(11, 0, 8)
	f.wantTake(10, "p3") // the deleted pending entries are not taken
}

// testRetrySelects checks that Retry makes pending again the final
// entries its filter selects, each of its fields as List applies it, and
// only those: a live entry the filter selects is left as it is and not
// counted (RetryID reports ErrWrongState when nothing was retried), and so
// is a final entry whose key a live entry holds, which would otherwise
// make two live entries of one key.
func testRetrySelects(t *testing.T, f *fixture) {
	ids := map[string]sched.ID{}
	for _, k := range []string{"fa1", "fa2", "fb1", "fb2"} { // 1–4, at t0…t0+3s
		ids[k] = sched.ID(len(ids) + 1)
		f.finish(sched.OutcomeFailed, k)
	}
	ids["sa1"], ids["ca1"], ids["kx"] = 5, 6, 7
	f.finish(sched.OutcomeSucceeded, "sa1") // t0+4s
	f.finish(sched.OutcomeCancelled, "ca1") // t0+5s
	f.finish(sched.OutcomeFailed, "kx")     // t0+6s
	ids["run"] = f.later("run", priority(9))
	cs, s := f.wantTake(1, "run")
	defer s.Close(scope.Succeeded())
	if err := f.b.Start(f.ctx, &cs[0], f.now, time.Time{}); err != nil {
		t.Fatal(err)
	}
	ids["kx live"] = f.later("kx") // kx's key is live again
	ids["pa1"] = f.later("pa1")
	ids["da1"] = f.later("da1", runAt(f.now.Add(time.Hour)))
	f.counts(sched.Counts{Failed: 5, Succeeded: 1, Cancelled: 1, Running: 1, Pending: 2, Delayed: 1})
	retried := map[string]bool{}
	for _, step := range []struct {
		name string
		f    sched.Filter[Payload, string]
		want []string
	}{
		{"Key", sched.Filter[Payload, string]{Key: func(k string) bool { return strings.HasPrefix(k, "fa") }}, []string{"fa1", "fa2"}},
		{"From and To", sched.Filter[Payload, string]{From: t0.Add(2 * time.Second), To: t0.Add(3 * time.Second)}, []string{"fb1"}},
		{"Match", sched.Filter[Payload, string]{Payloads: true, Match: func(e *sched.Entry[Payload, string]) bool { return strings.HasSuffix(e.Payload.Note, "2") }}, []string{"fb2"}},
		{"After", sched.Filter[Payload, string]{After: ids["sa1"]}, []string{"ca1"}},
		{"States", sched.Filter[Payload, string]{States: []sched.State{sched.StateSucceeded, sched.StateRunning, sched.StatePending}}, []string{"sa1"}},
		{"nothing final left but a taken key", sched.Filter[Payload, string]{}, nil},
	} {
		n, err := f.b.Retry(f.ctx, step.f, false, f.now)
		if err != nil {
			t.Fatalf("Retry by %s: %v", step.name, err)
		}
		for _, k := range step.want {
			retried[k] = true
		}
		for k, id := range ids {
			want := map[string]sched.State{"run": sched.StateRunning, "da1": sched.StateDelayed, "kx": sched.StateFailed,
				"sa1": sched.StateSucceeded, "ca1": sched.StateCancelled}[k]
			switch {
			case retried[k]:
				want = sched.StatePending
			case strings.HasPrefix(k, "f"):
				want = sched.StateFailed
			case want == 0: // pa1, kx live
				want = sched.StatePending
			}
			if got := f.state(id); got != want {
				t.Errorf("after Retry by %s, %s is %v, want %v", step.name, k, got, want)
			}
		}
		if n != len(step.want) {
			t.Fatalf("Retry by %s = %d, want %d (%v)", step.name, n, len(step.want), step.want)
		}
	}
	f.counts(sched.Counts{Failed: 1, Running: 1, Pending: 8, Delayed: 1})
}
