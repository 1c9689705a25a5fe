package main

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Scenario 1's limits, from the issue: jobkit ÷ client-go per item, by path
// and batch size; jobkit ÷ the channel at (4,4) one item at a time; and
// allocations.
var (
	clientGoLimits = map[string]map[string]float64{
		"work":  {"1": 0.6, "16": 0.35},
		"scope": {"1": 0.8, "16": 0.4},
	}
	chanLimit = 3.0
	// allocation limits: per item on path=work (by batch), per batch on
	// path=scope.
	workAllocLimits = map[string]float64{"1": 1, "16": 0.1}
	scopeAllocLimit = 1.0
)

// kindDocs describe the key kinds of BenchmarkMPMC.
var kindDocs = map[string]string{
	"ordered":   "integer IDs 0..n−1, producer i of P adding i, i+P, i+2P, … (together, roughly in order)",
	"ranges":    "integer IDs, producer i of P owning the range [i·n/P, (i+1)·n/P) and adding it in order",
	"scrambled": "integers that look random: ID × 0x9E3779B97F4A7C15 (a bijection), interleaved across producers as `ordered`",
	"string":    "client-go's `namespace/name` keys, `\"default/pod-<ID>\"`, made before the timer, interleaved as `ordered`",
	"struct":    "a small struct, `struct{ Tenant uint32; ID uint64 }` (16 bytes, Tenant = ID mod 16), interleaved as `ordered`",
	"named":     "a named integer type, `type JobID int64`, interleaved as `ordered`",
}

// group is one table of scenario 1: a key kind and a path.
type group struct {
	keys, path string
	rows       []string // the base impl's benchmark names, in run order
	met        int
	missed     []string // what was missed, with the figure
	nodata     int
}

func (g *group) title() string { return "keys=" + g.keys + ", path=" + g.path }

// status is the targets column of the headline.
func (g *group) status() string {
	total := g.met + len(g.missed)
	if total == 0 {
		return "no data"
	}
	if len(g.missed) == 0 {
		return fmt.Sprintf("%d of %d met", g.met, total)
	}
	return fmt.Sprintf("%d of %d met, **%d missed**", g.met, total, len(g.missed))
}

// mpmc holds what the report computes for scenario 1.
type mpmc struct {
	impls  []string // jobkit first, then the peers in run order
	groups []*group // in run order
	status map[string][]string
}

// peer returns the name of impl's figure for the base impl's row n: the same
// name with impl=<impl>, or, if impl has no such result (it has one consumer
// loop, measured once), its path=work figure.
func (r *reporter) peer(n, impl string) string {
	m := withImpl(n, impl)
	if _, ok := r.d.results[m]; ok {
		return m
	}
	return with(m, "path", "work")
}

// implsOf returns the impls of scenario in the order they first appear,
// base first.
func (r *reporter) implsOf(scenario, base string) []string {
	out := []string{base}
	for _, n := range r.d.order {
		res := r.d.results[n]
		if im := res.keys["impl"]; res.keys["scenario"] == scenario && !slices.Contains(out, im) {
			out = append(out, im)
		}
	}
	return out
}

// scenario1 groups scenario 1's results by key kind and path and checks its
// targets.
func (r *reporter) scenario1() *mpmc {
	m := &mpmc{impls: r.implsOf("MPMC", "jobkit"), status: map[string][]string{}}
	byKey := map[string]*group{}
	for _, n := range r.rows("MPMC", "jobkit") {
		k := r.d.results[n].keys
		id := k["keys"] + "/" + k["path"]
		g := byKey[id]
		if g == nil {
			g = &group{keys: k["keys"], path: k["path"]}
			byKey[id] = g
			m.groups = append(m.groups, g)
		}
		g.rows = append(g.rows, n)
	}
	for _, g := range m.groups {
		for _, n := range g.rows {
			m.status[n] = r.checkRow(g, n)
		}
	}
	return m
}

// checkRow records the targets of one scenario-1 row and returns its missed
// figures ("met" if none).
func (r *reporter) checkRow(g *group, n string) []string {
	k := r.d.results[n].keys
	row := fmt.Sprintf("backlog=%s p=%s c=%s batch=%s", k["backlog"], k["p"], k["c"], k["batch"])
	label := g.title() + ", " + row
	var missed []string
	note := func(t target, short string) {
		switch {
		case t.missing:
			g.nodata++
		case t.met:
			g.met++
		default:
			g.missed = append(g.missed, fmt.Sprintf("%s %s (%s)", short, num(t.value), row))
			missed = append(missed, fmt.Sprintf("%s %s > %s", short, num(t.value), strings.TrimPrefix(t.limit, "≤ ")))
		}
	}
	if lim, ok := clientGoLimits[g.path][k["batch"]]; ok {
		rat, ok := r.ratio(n, r.peer(n, "clientgo"), "ns/op")
		note(r.check("1 MPMC", "time/item jobkit ÷ client-go, "+label, rat, ok, lim), "÷ client-go")
	}
	if k["p"] == "4" && k["c"] == "4" && k["batch"] == "1" {
		rat, ok := r.ratio(n, r.peer(n, "chan"), "ns/op")
		note(r.check("1 MPMC", "time/item jobkit ÷ chan, "+label, rat, ok, chanLimit), "÷ chan")
	}
	if g.path == "scope" {
		a, ok := r.med(n, "allocs/batch")
		note(r.check("1 MPMC", "jobkit allocs/batch, "+label, a, ok, scopeAllocLimit), "allocs/batch")
	} else if lim, ok := workAllocLimits[k["batch"]]; ok {
		a, ok := r.med(n, "allocs/item")
		note(r.check("1 MPMC", "jobkit allocs/item, "+label, a, ok, lim), "allocs/item")
	}
	return missed
}

// ratios returns jobkit ÷ impl per item over g's rows with batch size batch
// ("" for all).
func (r *reporter) ratios(g *group, impl, batch string) []float64 {
	var out []float64
	for _, n := range g.rows {
		if batch != "" && r.d.results[n].keys["batch"] != batch {
			continue
		}
		if v, ok := r.ratio(n, r.peer(n, impl), "ns/op"); ok {
			out = append(out, v)
		}
	}
	return out
}

// geomean returns the geometric mean of jobkit ÷ client-go per item over
// g's rows, and false if there are none: the figure the headline ranks by.
// Over a table's rows, rather than its worst row, so that one noisy cell
// does not decide which key kind and path comes first.
func (r *reporter) geomean(g *group) (float64, bool) {
	vs := r.ratios(g, "clientgo", "")
	if len(vs) == 0 {
		return 0, false
	}
	sum := 0.0
	for _, v := range vs {
		sum += math.Log(v)
	}
	return math.Exp(sum / float64(len(vs))), true
}

// rank orders groups least favourable first: by the geometric mean of
// jobkit ÷ client-go over their rows, largest first; groups without it last.
func (r *reporter) rank(groups []*group) []*group {
	key := func(g *group) float64 {
		if v, ok := r.geomean(g); ok {
			return v
		}
		return math.Inf(-1)
	}
	out := slices.Clone(groups)
	slices.SortStableFunc(out, func(a, b *group) int { return cmp.Compare(key(b), key(a)) })
	return out
}

// span writes values as "lo–hi" (or one value), "–" if there are none.
func span(vs []float64) string {
	if len(vs) == 0 {
		return "–"
	}
	lo, hi := slices.Min(vs), slices.Max(vs)
	if ratioText(lo, 1, true) == ratioText(hi, 1, true) {
		return ratioText(lo, 1, true)
	}
	return ratioText(lo, 1, true) + "–" + ratioText(hi, 1, true)
}

// headline writes the summary of scenario 1, least favourable key kind and
// path first.
func (r *reporter) headline(m *mpmc, ranked []*group) {
	if len(ranked) == 0 {
		return
	}
	r.printf("## Headline: scenario 1 by key kind and path, least favourable first\n\n")
	r.printf("Producers → consumers with distinct keys (scenario 1), jobkit ÷ peer per item, as the range over every (P,C) and both backlogs of the table of that key kind and path; below 1 jobkit is faster. Rows are ordered least favourable first: by the geometric mean of jobkit ÷ client-go over the table's rows. ")
	r.printf("No one key kind stands for the general case: quote the first row with the last.\n\n")
	r.printf("| keys | path | ÷ client-go, geometric mean | ÷ client-go, batch 1 | ÷ client-go, batch 16 |")
	for _, im := range m.impls[1:] {
		if im != "clientgo" {
			r.printf(" ÷ %s |", im)
		}
	}
	r.printf(" jobkit allocs/batch | targets |\n|---|---|--:|--:|--:|")
	for _, im := range m.impls[1:] {
		if im != "clientgo" {
			r.printf("--:|")
		}
	}
	r.printf("--:|---|\n")
	for _, g := range ranked {
		gm, ok := r.geomean(g)
		r.printf("| %s | %s | %s | %s | %s |", g.keys, g.path, ratioText(gm, 1, ok), span(r.ratios(g, "clientgo", "1")), span(r.ratios(g, "clientgo", "16")))
		for _, im := range m.impls[1:] {
			if im != "clientgo" {
				r.printf(" %s |", span(r.ratios(g, im, "")))
			}
		}
		var allocs []float64
		for _, n := range g.rows {
			if v, ok := r.med(n, "allocs/batch"); ok {
				allocs = append(allocs, v)
			}
		}
		a := "–"
		if len(allocs) > 0 {
			a = num(slices.Min(allocs)) + "–" + num(slices.Max(allocs))
		}
		r.printf(" %s | %s |\n", a, g.status())
	}
	worst, best := ranked[0], ranked[len(ranked)-1]
	r.printf("\nLeast favourable: **%s**, jobkit ÷ client-go %s one item at a time and %s in batches of 16. ", worst.title(), span(r.ratios(worst, "clientgo", "1")), span(r.ratios(worst, "clientgo", "16")))
	if best != worst {
		r.printf("Best: **%s**, %s and %s.", best.title(), span(r.ratios(best, "clientgo", "1")), span(r.ratios(best, "clientgo", "16")))
	}
	r.printf("\n\n")
}

// section1 writes scenario 1: the chart of the least favourable key kind
// and path, then one table per key kind and path.
func (r *reporter) section1(m *mpmc, ranked []*group, svg string) {
	r.printf("## 1. End-to-end MPMC, distinct keys\n\n")
	r.printf("`BenchmarkMPMC/keys=<kind>/path=<path>/backlog=<backlog>/p=<P>/c=<C>/batch=<B>/impl=<impl>`. P producers add b.N distinct keys, C consumers take batches of up to B and complete them; the timer stops when b.N items are processed and every producer has returned. ns/item is ns/op: one add and one take-and-complete. ")
	r.printf("client-go and the priority queue hand out one item per Get whatever the batch; the channel's batch is one blocking and up to B−1 non-blocking receives. allocs/item and allocs/batch count every allocation in the timed window, from any goroutine.\n\n")
	r.printf("- **path**: `work` is each implementation's consumer loop: jobkit's `Queue.Work`, which settles a batch and takes the next under one lock; `Process` (Get and Done, or a receive) in a loop for the peers. `scope` is jobkit's explicit-scope loop, the README's second example: `scope.Run` around `Take`, the batch settled when the scope closes. The peers have one loop: it is measured once, under path=work, and their figures in the path=scope tables are those.\n")
	r.printf("- **backlog**: `small` keeps at most about 1,024 items queued (producers wait, on one credit per 64 adds, while they are further ahead of the consumers); the other value preloads that many keys of the kind before the timer and lets the producers race the consumers unbounded, so the queue starts there and grows while they are ahead. peak-backlog is the number queued when the last producer returned.\n")
	r.printf("- **keys**: the key kinds, all made before the timer and the same for every implementation:\n")
	seen := map[string]bool{}
	for _, g := range m.groups {
		if !seen[g.keys] {
			seen[g.keys] = true
			doc := kindDocs[g.keys]
			if doc == "" {
				doc = "(undocumented kind)"
			}
			r.printf("  - `%s`: %s.\n", g.keys, doc)
		}
	}
	r.printf("\n")
	if len(ranked) > 0 {
		r.printf("The chart shows the least favourable key kind and path, **%s** (batch 1 solid, batch 16 dashed):\n\n", ranked[0].title())
	}
	r.printf("![time per item against consumers](%s)\n\n", svg)
	for _, g := range m.groups {
		r.printf("### %s\n\n", g.title())
		if g.path == "scope" {
			r.printf("Peers: their path=work figures (one loop).\n\n")
		}
		r.mpmcTable(m, g)
	}
}

// mpmcTable writes one scenario-1 table.
func (r *reporter) mpmcTable(m *mpmc, g *group) {
	peers := m.impls[1:]
	r.printf("| backlog p c batch |")
	for _, im := range m.impls {
		r.printf(" %s ns/item |", im)
	}
	for _, p := range peers {
		r.printf(" jobkit/%s |", p)
	}
	r.printf(" jobkit allocs/item | jobkit allocs/batch | jobkit items/batch | jobkit peak-backlog | clientgo peak-backlog | targets |\n|---|")
	for range len(m.impls) + len(peers) + 5 {
		r.printf("--:|")
	}
	r.printf("---|\n")
	for _, n := range g.rows {
		k := r.d.results[n].keys
		r.printf("| %s %s %s %s |", k["backlog"], k["p"], k["c"], k["batch"])
		for _, im := range m.impls {
			v, ok := r.med(r.peer(n, im), "ns/op")
			r.printf(" %s |", maybe(v, ok))
		}
		for _, p := range peers {
			rat, ok := r.ratio(n, r.peer(n, p), "ns/op")
			r.printf(" %s |", ratioText(rat, 1, ok))
		}
		for _, u := range []string{"allocs/item", "allocs/batch", "items/batch", "peak-backlog"} {
			v, ok := r.med(n, u)
			r.printf(" %s |", maybe(v, ok))
		}
		v, ok := r.med(r.peer(n, "clientgo"), "peak-backlog")
		r.printf(" %s |", maybe(v, ok))
		st := "met"
		if missed := m.status[n]; len(missed) > 0 {
			st = "**missed**: " + strings.Join(missed, "; ")
		}
		r.printf(" %s |\n", st)
	}
	r.printf("\n")
}
