package props

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"pgregory.net/rapid"

	"github.com/jobkit/jobkit/sched"
)

// gspec is an entry of TestGroupedOrderMatchesModel: its priority, its
// group ("" for none), the entries its first run adds, and whether that run
// asks for a rerun.
type gspec struct {
	prio     int
	group    string
	children []int
	rerun    bool
}

// gmodel is the reference for the order of a grouped queue with one worker:
// a FIFO of units per priority, a unit being an entry without a group or a
// group. A group waits at the priority of its oldest pending entry, moving
// to the tail of another level when that changes; a take takes one unit,
// and for a group up to a batch of its oldest pending entries, in the order
// they were added, after which the group, if it still has entries pending,
// goes to the tail of its level. A rerun puts an entry without a group back
// at its place, the head of its level (with one worker it was at the head
// when taken), and an entry of a group back among the group's pending
// entries at its place in the order of adds.
type gmodel struct {
	specs  []gspec
	batch  int
	levels map[int][]string // units by priority: "e<key>" or "g<name>"
	groups map[string]*ggroup
	ids    map[int]int // the order of each key's add
	ran    map[int]bool
	order  []int // keys in the order they run
}

type ggroup struct {
	pending []int // keys, in the order they were added
	level   int   // where the group is queued, or 0
	busy    bool
}

func (m *gmodel) add(k int) {
	m.ids[k] = len(m.ids)
	sp := m.specs[k]
	if sp.group == "" {
		m.levels[sp.prio] = append(m.levels[sp.prio], fmt.Sprint("e", k))
		return
	}
	g := m.groups[sp.group]
	if g == nil {
		g = &ggroup{}
		m.groups[sp.group] = g
	}
	g.pending = append(g.pending, k) // keys are added in increasing ID order
	m.relevel(sp.group, g)
}

func (m *gmodel) relevel(name string, g *ggroup) {
	if g.busy {
		return
	}
	want := 0
	if len(g.pending) > 0 {
		want = m.specs[g.pending[0]].prio
	}
	if g.level == want {
		return
	}
	if g.level != 0 {
		m.levels[g.level] = slices.DeleteFunc(m.levels[g.level], func(u string) bool { return u == "g"+name })
	}
	if want != 0 {
		m.levels[want] = append(m.levels[want], "g"+name)
	}
	g.level = want
}

// run runs the entry k: it records it and, the first time, adds its
// children and maybe asks for a rerun.
func (m *gmodel) run(k int) {
	m.order = append(m.order, k)
	if m.ran[k] {
		return
	}
	m.ran[k] = true
	sp := m.specs[k]
	for _, c := range sp.children {
		m.add(c)
	}
	if !sp.rerun {
		return
	}
	if sp.group == "" {
		m.levels[sp.prio] = slices.Insert(m.levels[sp.prio], 0, fmt.Sprint("e", k))
		return
	}
	g := m.groups[sp.group] // busy: it stays out of the levels
	i, _ := slices.BinarySearchFunc(g.pending, m.ids[k], func(x, id int) int { return cmp.Compare(m.ids[x], id) })
	g.pending = slices.Insert(g.pending, i, k)
}

// drain takes unit after unit until nothing is queued.
func (m *gmodel) drain() {
	for {
		p := 0
		for l, us := range m.levels {
			if len(us) > 0 && l > p {
				p = l
			}
		}
		if p == 0 {
			return
		}
		u := m.levels[p][0]
		m.levels[p] = m.levels[p][1:]
		if u[0] == 'e' {
			var k int
			fmt.Sscan(u[1:], &k)
			m.run(k)
			continue
		}
		name := u[1:]
		g := m.groups[name]
		n := min(m.batch, len(g.pending))
		claimed := slices.Clone(g.pending[:n])
		g.pending = slices.Delete(g.pending, 0, n)
		g.busy, g.level = true, 0
		for _, k := range claimed {
			m.run(k)
		}
		g.busy = false
		if len(g.pending) > 0 {
			want := m.specs[g.pending[0]].prio
			m.levels[want] = append(m.levels[want], u)
			g.level = want
		}
	}
}

// TestGroupedOrderMatchesModel runs a grouped queue with one worker and
// batches of 1 to 3 on entries of mixed priorities, in two groups and none,
// some added before Start and the rest by the runs of earlier entries, a
// quarter of them asking for one rerun, and
// requires the order of the runs to be the model's (see gmodel): a group
// runs at the priority of its oldest pending entry, entries of a group are
// taken together (up to a batch) in the order they were added, and a group
// goes to the tail of its level after each batch. TestSchedulerMatchesModel
// checks the order of runs only for queues without groups.
func TestGroupedOrderMatchesModel(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(rt *rapid.T) {
		rapid.SyncTest(rt, func(rt *rapid.T) {
			if failure := runGroupedOrder(rt); failure != "" {
				rt.Fatal(failure)
			}
		})
	})
}

func runGroupedOrder(rt *rapid.T) string {
	ctx := context.Background()
	batch := rapid.IntRange(1, 3).Draw(rt, "batch")
	n := rapid.IntRange(1, 12).Draw(rt, "entries")
	specs := make([]gspec, n)
	var roots []int
	for k := range specs {
		specs[k].prio = rapid.SampledFrom([]int{sched.MinPriority, 5}).Draw(rt, "priority")
		specs[k].group = rapid.SampledFrom([]string{"", "a", "b"}).Draw(rt, "group")
		specs[k].rerun = rapid.IntRange(0, 3).Draw(rt, "rerun") == 0
		// An entry is added before Start, or by the run of an earlier one.
		if parent := rapid.IntRange(-1, k-1).Draw(rt, "parent"); parent >= 0 {
			specs[parent].children = append(specs[parent].children, k)
		} else {
			roots = append(roots, k)
		}
	}

	var (
		mu       sync.Mutex
		order    []int
		problems []string
	)
	s, err := sched.New(sched.Config{Workers: 1, Loops: 1})
	if err != nil {
		return err.Error()
	}
	var q *sched.Queue[int, int]
	add := func(k int) error {
		var opts []sched.AddOption
		if p := specs[k].prio; p != sched.MinPriority {
			opts = append(opts, sched.WithPriority(p))
		}
		if _, ok, err := q.Add(ctx, k, opts...); err != nil || !ok {
			return fmt.Errorf("Add(%d) = %v, %v", k, ok, err)
		}
		return nil
	}
	q, err = sched.NewQueue(s, "grouped", sched.QueueConfig[int, int]{
		Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
			mu.Lock()
			order = append(order, j.Key)
			mu.Unlock()
			if j.Reruns > 0 {
				return nil
			}
			for _, c := range specs[j.Key].children {
				if err := add(c); err != nil {
					mu.Lock()
					problems = append(problems, err.Error())
					mu.Unlock()
				}
			}
			if specs[j.Key].rerun {
				return sched.Rerun(nil)
			}
			return nil
		},
		BatchSize: batch,
		Group:     func(k int) string { return specs[k].group },
	})
	if err != nil {
		return err.Error()
	}
	for _, k := range roots {
		if err := add(k); err != nil {
			return err.Error()
		}
	}
	if err := s.Start(ctx); err != nil {
		return err.Error()
	}
	synctest.Wait() // every run is done: none waits for anything
	if err := s.Stop(ctx); err != nil {
		return "Stop: " + err.Error()
	}

	m := &gmodel{specs: specs, batch: batch, levels: map[int][]string{}, groups: map[string]*ggroup{}, ids: map[int]int{}, ran: map[int]bool{}}
	for _, k := range roots {
		m.add(k)
	}
	m.drain()
	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		return problems[0]
	}
	if !slices.Equal(order, m.order) {
		return fmt.Sprintf("ran %v, model %v (batch %d, specs %+v)", order, m.order, batch, specs)
	}
	return ""
}
