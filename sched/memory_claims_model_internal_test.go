package sched

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/jobkit/jobkit/scope"
)

// runClaimsModel runs random adds, takes, starts, settles of every kind,
// scope closes, disables, management calls by filter (states, ID ranges,
// Key, Match), leases, renewals and rescues of lapsed claims on a Memory,
// grouped or not, and checks after every step: that a take claims only
// entries that were pending and enabled, or delayed, due and enabled,
// before it, so that no entry is claimed twice; that a take holds one
// group, in ID order, never one of whose entries another take holds, or
// else one entry; the groups' invariants (checkGrouped); and List against
// Counts (checkListing).
func runClaimsModel(t *testing.T, seed uint64, grouped bool, steps int) {
	r := rand.New(rand.NewPCG(seed, 0x4e4))
	ctx := context.Background()
	keepNone := r.IntN(3) == 0
	m := modelMemory(t, keepNone, r.IntN(2) == 0, grouped)
	now := time.Unix(1000, 0)
	var opens []rvOpen
	var log []string
	fail := func(step int, format string, args ...any) {
		t.Helper()
		tail := log
		if len(tail) > 80 {
			tail = tail[len(tail)-80:]
		}
		t.Fatalf("seed %d step %d: %s\n%s", seed, step, fmt.Sprintf(format, args...), joinLines(tail))
	}
	kinds := []OutcomeKind{OutcomeSucceeded, OutcomeFailed, OutcomeCancelled, OutcomePoisoned, OutcomeRetry, OutcomeSnooze, OutcomeRerun}
	allStates := []State{StateDelayed, StatePending, StateAwaiting, StateRunning, StateSucceeded, StateFailed, StateCancelled, StatePoisoned}
	randFilter := func() Filter[int, int] {
		var f Filter[int, int]
		ids := storedIDs(m)
		if len(ids) > 0 && r.IntN(2) == 0 {
			a := ids[r.IntN(len(ids))]
			f.After = a - 1
			f.Until = a + ID(r.IntN(4))
		}
		if r.IntN(2) == 0 {
			for _, s := range allStates {
				if r.IntN(3) == 0 {
					f.States = append(f.States, s)
				}
			}
		}
		if r.IntN(4) == 0 {
			k := r.IntN(3)
			f.Key = func(x int) bool { return x%3 == k }
		}
		if r.IntN(4) == 0 {
			f.Match = func(e *Entry[int, int]) bool { return e.Attempts%2 == 0 }
		}
		return f
	}
	for step := range steps {
		switch r.IntN(16) {
		case 0, 1, 2:
			a := NewEntry[int, int]{Key: r.IntN(30), Priority: 1 + r.IntN(3), Now: now, RunAt: now, Disabled: r.IntN(8) == 0}
			if grouped && r.IntN(3) != 0 {
				a.Group = []string{"a", "b", "c"}[r.IntN(3)]
			}
			if r.IntN(4) == 0 {
				a.RunAt = now.Add(time.Duration(1+r.IntN(4)) * time.Second)
			}
			id, added, err := m.Add(ctx, a)
			if err != nil {
				t.Fatal(err)
			}
			log = append(log, fmt.Sprintf("add %d group %q prio %d dis %v: %d %v", a.Key, a.Group, a.Priority, a.Disabled, id, added))
		case 3, 4:
			// what may be claimed: pending and enabled, or delayed, due and enabled
			m.mu.Lock()
			n := m.clock.ns(now)
			ok := map[ID]bool{}
			for _, e := range m.order.s {
				if e != nil && !e.disabled && (e.state == StatePending || (e.state == StateDelayed && e.runAt <= n)) {
					ok[e.id] = true
				}
			}
			m.mu.Unlock()
			max := 1 + r.IntN(4)
			s := scope.New()
			var lease time.Time
			if r.IntN(2) == 0 {
				lease = now.Add(time.Duration(1+r.IntN(3)) * time.Second)
			}
			// entries of groups claimed now, before the take
			m.mu.Lock()
			claimed := map[string]bool{}
			for _, e := range m.order.s {
				if e != nil && e.group != nil && (e.state == StateAwaiting || e.state == StateRunning) {
					claimed[e.group.name] = true
				}
			}
			m.mu.Unlock()
			cs, err := m.Take(ctx, s, TakeRequest{Now: now, Max: max, LeaseUntil: lease}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range cs {
				switch {
				case c.Group != cs[0].Group:
					fail(step, "a take mixes groups: %+v", cs)
				case c.Group != "" && i > 0 && c.ID < cs[i-1].ID:
					fail(step, "group entries out of ID order: %+v", cs)
				}
			}
			switch {
			case len(cs) > 0 && cs[0].Group != "" && claimed[cs[0].Group]:
				fail(step, "group %q taken while another of its entries is claimed", cs[0].Group)
			case grouped && len(cs) > 1 && cs[0].Group == "":
				fail(step, "%d entries without a group in one take", len(cs))
			}
			var got []ID
			for _, c := range cs {
				got = append(got, c.ID)
				if !ok[c.ID] {
					fail(step, "take claimed %d, which was not pending and enabled before it (claimed %v)", c.ID, got)
				}
				delete(ok, c.ID) // twice in one take
				e, err := m.Get(ctx, c.ID)
				if err != nil || e.State != StateAwaiting || e.Gen != c.Gen || e.Attempts != c.Attempts || e.Key != c.Key {
					fail(step, "claim %+v, entry %+v %v", c, e, err)
				}
			}
			log = append(log, fmt.Sprintf("take %d: %v (take #%d)", max, got, len(opens)))
			if len(cs) > 0 {
				opens = append(opens, rvOpen{s, cs})
			} else {
				_ = s.Close(scope.Succeeded())
			}
		case 5, 6, 7:
			if len(opens) == 0 {
				continue
			}
			o := opens[r.IntN(len(opens))]
			c := &o.cs[r.IntN(len(o.cs))]
			if r.IntN(2) == 0 {
				err := m.Start(ctx, c, now, time.Time{})
				log = append(log, fmt.Sprintf("start %d gen %d: %v", c.ID, c.Gen, err))
			}
			k := kinds[r.IntN(len(kinds))]
			err := m.Settle(ctx, c, Outcome{Kind: k, Finished: now, At: now.Add(time.Duration(r.IntN(3)) * time.Second)})
			log = append(log, fmt.Sprintf("settle %d gen %d %v: %v", c.ID, c.Gen, k, err))
		case 8:
			if len(opens) == 0 {
				continue
			}
			i := r.IntN(len(opens))
			exit := scope.Succeeded()
			if r.IntN(2) == 0 {
				exit = scope.Failed(nil)
			}
			_ = opens[i].s.Close(exit)
			log = append(log, fmt.Sprintf("close take #%d failed %v", i, exit.Failed()))
			opens = append(opens[:i], opens[i+1:]...)
		case 9:
			ids := storedIDs(m)
			if len(ids) == 0 {
				continue
			}
			id := ids[r.IntN(len(ids))]
			dis := r.IntN(2) == 0
			err := m.SetDisabled(ctx, id, dis)
			log = append(log, fmt.Sprintf("disable %d %v: %v", id, dis, err))
		case 10:
			f := randFilter()
			n, err := m.Retry(ctx, f, r.IntN(2) == 0, now)
			log = append(log, fmt.Sprintf("retry %v %d..%d: %d %v", f.States, f.After, f.Until, n, err))
		case 11:
			f := randFilter()
			n, err := m.Delete(ctx, f)
			log = append(log, fmt.Sprintf("delete %v %d..%d: %d %v", f.States, f.After, f.Until, n, err))
		case 12:
			now = now.Add(time.Second)
			_, _, _ = m.Promote(ctx, now)
			log = append(log, "tick+promote")
		case 13:
			_, _, _ = m.Expire(ctx, now.Add(time.Duration(r.IntN(4000))*time.Second))
			log = append(log, "expire")
		case 14:
			// a reaper: rescue what lapsed
			cs, err := m.Expired(ctx, now, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i := range cs {
				err := m.Settle(ctx, &cs[i], Outcome{Kind: OutcomeRerun, Finished: now, Rescued: true})
				log = append(log, fmt.Sprintf("rescue %d gen %d: %v", cs[i].ID, cs[i].Gen, err))
			}
		case 15:
			if len(opens) == 0 {
				continue
			}
			o := opens[r.IntN(len(opens))]
			c := &o.cs[r.IntN(len(o.cs))]
			err := m.Renew(ctx, c.ID, c.Gen, now.Add(time.Duration(r.IntN(3))*time.Second))
			log = append(log, fmt.Sprintf("renew %d gen %d: %v", c.ID, c.Gen, err))
		}
		checkGrouped(t, m, step, log)
		checkListing(t, m, step, log)
	}
	for _, o := range opens {
		_ = o.s.Close(scope.Succeeded())
	}
	checkGrouped(t, m, -1, log)
}

// checkListing checks List and Counts against each other.
func checkListing(t *testing.T, m *Memory[int, int], step int, log []string) {
	t.Helper()
	ctx := context.Background()
	c, _ := m.Counts(ctx)
	var n Counts
	var ids []ID
	for e, err := range m.List(ctx, Filter[int, int]{}) {
		if err != nil {
			t.Fatal(err)
		}
		n.add(e.State, 1)
		if e.Disabled {
			n.Disabled++
		}
		ids = append(ids, e.ID)
	}
	if !slices.IsSorted(ids) || !slices.Equal(ids, storedIDs(m)) {
		t.Fatalf("step %d: listing %v", step, ids)
	}
	if n != c.States() {
		t.Fatalf("step %d: counts %+v, listing %+v\n%s", step, c, n, joinLines(log))
	}
	if c.Added != c.Live()+c.Retained()+c.Expired+c.Deleted {
		t.Fatalf("step %d: counts do not add up: %+v", step, c)
	}
}

// TestMemoryClaimsModel runs the model of runClaimsModel, every other seed on a
// grouped queue.
func TestMemoryClaimsModel(t *testing.T) {
	t.Parallel()
	seeds := uint64(120)
	if testing.Short() {
		seeds = 25 // under -race in CI
	}
	for seed := range seeds {
		runClaimsModel(t, seed, seed%2 == 0, 1200)
	}
}
