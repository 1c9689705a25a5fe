package sched

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/jobkit/jobkit/scope"
)

// rvOpen is an open take of the model test.
type rvOpen struct {
	s  *scope.Scope
	cs []Claim[int, int]
}

// rvModel checks a Memory (not grouped) against FIFO positions it keeps
// itself: every entry pending and enabled has a position (seq), given when
// it becomes pending and enabled, kept while it is claimed (a rerun or a
// failed scope puts it back there), dropped otherwise.
type rvModel struct {
	t     *testing.T
	m     *Memory[int, int]
	seq   map[ID]int
	next  int
	opens []rvOpen
	step  int
	log   []string
}

func (md *rvModel) fatalf(format string, args ...any) {
	md.t.Helper()
	tail := md.log
	if len(tail) > 300 {
		tail = tail[len(tail)-300:]
	}
	md.t.Fatalf("step %d: %s\nlast ops:\n%s", md.step, fmt.Sprintf(format, args...), joinLines(tail))
}

func joinLines(s []string) string {
	out := ""
	for _, x := range s {
		out += "  " + x + "\n"
	}
	return out
}

// sync gives positions to entries newly pending and enabled, in the order
// given by first (IDs to number first, in order), then in distinct's
// order; and drops those of entries no longer pending, awaiting or running.
func (md *rvModel) sync(first []ID) {
	m := md.m
	m.mu.Lock()
	defer m.mu.Unlock()
	live := map[ID]*mentry[int, int]{}
	for _, e := range m.order.s {
		if e != nil {
			live[e.id] = e
		}
	}
	for id := range md.seq {
		e := live[id]
		if e == nil || !(e.state == StateAwaiting || e.state == StateRunning || (e.state == StatePending && !e.disabled)) {
			delete(md.seq, id)
		}
	}
	for _, id := range first {
		if e := live[id]; e != nil && ((e.state == StatePending && !e.disabled) || e.state == StateAwaiting) {
			if _, ok := md.seq[id]; !ok {
				md.seq[id] = md.next
				md.next++
			}
		}
	}
	for p := MaxPriority; p >= MinPriority; p-- {
		if m.levels[p] == nil {
			continue
		}
		for _, u := range m.levels[p].Queued() {
			if u.e == nil {
				continue
			}
			if _, ok := md.seq[u.e.id]; !ok && u.e.state == StatePending && !u.e.disabled {
				md.seq[u.e.id] = md.next
				md.next++
			}
		}
	}
}

// check checks the invariants under m.mu.
func (md *rvModel) check() {
	md.t.Helper()
	m := md.m
	m.mu.Lock()
	defer m.mu.Unlock()
	var c Counts
	want := map[int]int{} // pending enabled entries by priority
	for _, e := range m.order.s {
		if e == nil {
			continue
		}
		c.add(e.state, 1)
		if e.disabled && e.state.Live() {
			c.Disabled++
		}
		if e.state == StatePending && !e.disabled {
			want[e.priority]++
			if e.unit.level != e.priority {
				md.fatalf("entry %d is pending and enabled, its unit at level %d (priority %d): not takeable", e.id, e.unit.level, e.priority)
			}
			if _, ok := md.seq[e.id]; !ok {
				md.fatalf("entry %d pending and enabled without a position in the model", e.id)
			}
		}
		if (e.state == StateAwaiting || e.state == StateRunning) && e.take == nil {
			md.fatalf("entry %d is %v with no take", e.id, e.state)
		}
	}
	got := m.counts
	got.Added, got.Expired, got.Deleted = 0, 0, 0
	if got != c {
		md.fatalf("counts %+v, recount %+v", got, c)
	}
	for p := MinPriority; p <= MaxPriority; p++ {
		lv := m.levels[p]
		if lv == nil {
			if m.queued[p] != 0 || want[p] != 0 {
				md.fatalf("level %d: no queue, %d counted, %d pending", p, m.queued[p], want[p])
			}
			continue
		}
		us := lv.Queued()
		if len(us) != m.queued[p] || len(us) != want[p] {
			md.fatalf("level %d: %d units queued, %d counted, %d pending and enabled", p, len(us), m.queued[p], want[p])
		}
		last := -1
		for _, u := range us {
			e := u.e
			if e == nil || e.state != StatePending || e.disabled || e.priority != p {
				md.fatalf("level %d holds a unit of an entry not pending and enabled at that priority", p)
			}
			s := md.seq[e.id]
			if s < last {
				md.fatalf("level %d out of FIFO order: entry %d (position %d) after position %d; queued %v", p, e.id, s, last, md.queuedIDs(us))
			}
			last = s
		}
	}
}

func (md *rvModel) queuedIDs(us []*unit[int, int]) []string {
	var out []string
	for _, u := range us {
		out = append(out, fmt.Sprintf("%d@%d", u.e.id, md.seq[u.e.id]))
	}
	return out
}

// expectTake returns the IDs a Take of max at now should claim, and the
// entries its promotion makes pending, in order.
func (md *rvModel) expectTake(now time.Time, max int) (want, promoted []ID) {
	m := md.m
	m.mu.Lock()
	n := m.clock.ns(now)
	type cand struct {
		id  ID
		p   int
		seq int
	}
	var cs []cand
	for _, e := range m.order.s {
		if e != nil && e.state == StatePending && !e.disabled {
			cs = append(cs, cand{e.id, e.priority, md.seq[e.id]})
		}
	}
	var due []*mentry[int, int]
	for _, e := range m.delayed {
		if e.runAt <= n {
			due = append(due, e)
		}
	}
	slices.SortFunc(due, func(a, b *mentry[int, int]) int {
		return cmp.Or(cmp.Compare(a.runAt, b.runAt), cmp.Compare(a.id, b.id))
	})
	s := md.next
	for _, e := range due {
		promoted = append(promoted, e.id)
		if !e.disabled {
			cs = append(cs, cand{e.id, e.priority, s})
			s++
		}
	}
	m.mu.Unlock()
	slices.SortFunc(cs, func(a, b cand) int { return cmp.Or(cmp.Compare(b.p, a.p), cmp.Compare(a.seq, b.seq)) })
	for i := 0; i < len(cs) && i < max; i++ {
		want = append(want, cs[i].id)
	}
	return want, promoted
}

// modelMemory returns an opened Memory of int keys and payloads for a model
// run: one that keeps a few final entries of each state for an hour, or
// none if keepNone; failed entries block their keys if blockFailed.
func modelMemory(t *testing.T, keepNone, blockFailed, grouped bool) *Memory[int, int] {
	t.Helper()
	ret := Retention{Succeeded: time.Hour, MaxSucceeded: 5, Failed: time.Hour, MaxFailed: 3, Cancelled: time.Hour, MaxCancelled: 2}
	if keepNone {
		ret = Retention{}
	}
	m := NewMemory[int, int]()
	if err := m.Open(QueueInfo{Name: "q", BlockFailed: blockFailed, Retention: ret, Grouped: grouped}); err != nil {
		t.Fatal(err)
	}
	return m
}

func runMemModel(t *testing.T, seed uint64, steps int) {
	r := rand.New(rand.NewPCG(seed, seed^0x5eed))
	ctx := context.Background()
	keepNone := r.IntN(3) == 0
	m := modelMemory(t, keepNone, r.IntN(2) == 0, false)
	md := &rvModel{t: t, m: m, seq: map[ID]int{}}
	kinds := []OutcomeKind{OutcomeSucceeded, OutcomeFailed, OutcomeCancelled, OutcomePoisoned, OutcomeRetry, OutcomeSnooze, OutcomeRerun}
	now := time.Unix(1000, 0)
	ids := func() []ID { return storedIDs(m) }
	for md.step = 0; md.step < steps; md.step++ {
		var first []ID
		switch op := r.IntN(13); op {
		case 0, 1, 2:
			a := NewEntry[int, int]{Key: r.IntN(40), Priority: 1 + r.IntN(3), Now: now, RunAt: now, Disabled: r.IntN(10) == 0}
			if r.IntN(4) == 0 {
				a.RunAt = now.Add(time.Duration(1+r.IntN(4)) * time.Second)
			}
			id, added, err := m.Add(ctx, a)
			if err != nil {
				t.Fatal(err)
			}
			md.log = append(md.log, fmt.Sprintf("add key %d prio %d delayed %v disabled %v: %d %v", a.Key, a.Priority, a.RunAt.After(now), a.Disabled, id, added))
			first = []ID{id}
		case 3, 4:
			max := 1 + r.IntN(4)
			want, promoted := md.expectTake(now, max)
			s := scope.New()
			cs, err := m.Take(ctx, s, TakeRequest{Now: now, Max: max}, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []ID
			for _, c := range cs {
				got = append(got, c.ID)
			}
			md.log = append(md.log, fmt.Sprintf("take %d: %v (take #%d)", max, got, len(md.opens)))
			if !slices.Equal(got, want) {
				md.fatalf("Take of %d claimed %v, want %v", max, got, want)
			}
			if len(cs) > 0 {
				md.opens = append(md.opens, rvOpen{s, cs})
			} else {
				_ = s.Close(scope.Succeeded())
			}
			first = promoted
		case 5, 6, 7:
			if len(md.opens) == 0 {
				continue
			}
			o := md.opens[r.IntN(len(md.opens))]
			c := &o.cs[r.IntN(len(o.cs))]
			if r.IntN(2) == 0 {
				err := m.Start(ctx, c, now, time.Time{})
				md.log = append(md.log, fmt.Sprintf("start %d gen %d: %v", c.ID, c.Gen, err))
			}
			k := kinds[r.IntN(len(kinds))]
			err := m.Settle(ctx, c, Outcome{Kind: k, Finished: now, At: now.Add(time.Duration(r.IntN(3)) * time.Second)})
			md.log = append(md.log, fmt.Sprintf("settle %d gen %d %v: %v", c.ID, c.Gen, k, err))
			first = []ID{c.ID}
		case 8:
			if len(md.opens) == 0 {
				continue
			}
			i := r.IntN(len(md.opens))
			exit := scope.Succeeded()
			if r.IntN(2) == 0 {
				exit = scope.Failed(nil)
			}
			_ = md.opens[i].s.Close(exit)
			md.log = append(md.log, fmt.Sprintf("close take #%d failed %v", i, exit.Failed()))
			md.opens = append(md.opens[:i], md.opens[i+1:]...)
		case 9:
			all := ids()
			if len(all) == 0 {
				continue
			}
			id := all[r.IntN(len(all))]
			dis := r.IntN(2) == 0
			err := m.SetDisabled(ctx, id, dis)
			md.log = append(md.log, fmt.Sprintf("disable %d %v: %v", id, dis, err))
			first = []ID{id}
		case 10:
			all := ids()
			if len(all) == 0 {
				continue
			}
			id := all[r.IntN(len(all))]
			if r.IntN(2) == 0 {
				n, err := m.Retry(ctx, Filter[int, int]{After: id - 1, Until: id}, r.IntN(2) == 0, now)
				md.log = append(md.log, fmt.Sprintf("retry %d: %d %v", id, n, err))
			} else {
				n, err := m.Delete(ctx, Filter[int, int]{After: id - 1, Until: id})
				md.log = append(md.log, fmt.Sprintf("delete %d: %d %v", id, n, err))
			}
			first = []ID{id}
		case 11:
			now = now.Add(time.Second)
			md.log = append(md.log, "tick")
		case 12:
			_, _, _ = m.Expire(ctx, now.Add(time.Duration(r.IntN(4000))*time.Second))
			md.log = append(md.log, "expire")
		}
		md.sync(first)
		md.check()
	}
	for _, o := range md.opens {
		_ = o.s.Close(scope.Succeeded())
	}
	md.opens = nil
	md.sync(nil)
	md.check()
}

func TestMemoryModel(t *testing.T) {
	t.Parallel()
	seeds := uint64(100)
	if testing.Short() {
		seeds = 25 // under -race in CI
	}
	for seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runMemModel(t, seed, 1500) })
	}
}

// checkGrouped checks a grouped Memory's invariants under m.mu.
func checkGrouped(t *testing.T, m *Memory[int, int], step int, log []string) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	fail := func(format string, args ...any) {
		t.Helper()
		tail := log
		if len(tail) > 60 {
			tail = tail[len(tail)-60:]
		}
		t.Fatalf("step %d: %s\n%s", step, fmt.Sprintf(format, args...), joinLines(tail))
	}
	var c Counts
	busy := map[*group[int, int]]int{}
	pend := map[*group[int, int]][]ID{}
	want := map[int]int{}
	for _, e := range m.order.s {
		if e == nil {
			continue
		}
		c.add(e.state, 1)
		if e.disabled && e.state.Live() {
			c.Disabled++
		}
		if g := e.group; g != nil {
			if m.groups[g.name] != g {
				fail("entry %d's group %q is not the map's", e.id, g.name)
			}
			if e.state == StateAwaiting || e.state == StateRunning {
				busy[g]++
				if !g.busy {
					fail("entry %d of group %q is %v, the group not busy", e.id, g.name, e.state)
				}
			}
			if e.state == StatePending && !e.disabled {
				pend[g] = append(pend[g], e.id)
			}
		} else if e.state == StatePending && !e.disabled {
			want[e.priority]++
			if e.unit.level != e.priority {
				fail("entry %d pending, enabled, not queued", e.id)
			}
		}
	}
	got := m.counts
	got.Added, got.Expired, got.Deleted = 0, 0, 0
	if got != c {
		fail("counts %+v, recount %+v", got, c)
	}
	for name, g := range m.groups {
		if g.name != name {
			fail("group %q under %q", g.name, name)
		}
		var ids []ID
		for _, e := range g.pending {
			ids = append(ids, e.id)
		}
		if !slices.Equal(ids, pend[g]) {
			fail("group %q pending %v, its pending enabled entries %v", name, ids, pend[g])
		}
		if len(g.pending) > 0 && !g.busy {
			if g.level == 0 {
				fail("group %q has pending entries %v, is not busy, and is not queued", name, ids)
			}
			want[g.level]++
		}
		if g.busy && g.level != 0 {
			fail("group %q busy and queued", name)
		}
	}
	for p := MinPriority; p <= MaxPriority; p++ {
		if lv := m.levels[p]; lv != nil {
			if n := lv.Len(); n != m.queued[p] || n != want[p] {
				fail("level %d: %d queued, %d counted, %d expected", p, n, m.queued[p], want[p])
			}
		} else if want[p] != 0 {
			fail("level %d: none, want %d", p, want[p])
		}
	}
}

// storedIDs returns the IDs of the entries m stores, in ID order.
func storedIDs(m *Memory[int, int]) []ID {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []ID
	for _, e := range m.order.s {
		if e != nil {
			out = append(out, e.id)
		}
	}
	return out
}
