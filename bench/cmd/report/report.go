package main

import (
	"fmt"
	"math"
	"runtime"
	"strings"
)

// target is one figure the issue sets a limit on.
type target struct {
	scenario string
	what     string
	value    float64
	limit    string
	met      bool
	missing  bool // no data
}

func (t target) status() string {
	switch {
	case t.missing:
		return "no data"
	case t.met:
		return "met"
	}
	return "**missed**"
}

type reporter struct {
	d       *data
	b       strings.Builder
	targets []target
}

func (r *reporter) printf(format string, args ...any) { fmt.Fprintf(&r.b, format, args...) }

// med returns the median of unit for the benchmark name.
func (r *reporter) med(name, unit string) (float64, bool) {
	return r.d.results[name].median(unit)
}

// check records a target: value (a ratio or a count) must be ≤ limit.
func (r *reporter) check(scenario, what string, value float64, ok bool, limit float64) target {
	t := target{
		scenario: scenario,
		what:     what,
		value:    value,
		limit:    "≤ " + num(limit),
		met:      ok && value <= limit,
		missing:  !ok,
	}
	r.targets = append(r.targets, t)
	return t
}

// rows returns the names of scenario's benchmarks for impl, in run order.
func (r *reporter) rows(scenario, impl string) []string {
	var out []string
	for _, n := range r.d.order {
		res := r.d.results[n]
		if res.keys["scenario"] == scenario && res.keys["impl"] == impl {
			out = append(out, n)
		}
	}
	return out
}

// params returns the part of a name after its impl= segment.
func params(name string) string {
	segs := strings.Split(name, "/")
	var out []string
	for _, s := range segs[1:] {
		if !strings.HasPrefix(s, "impl=") {
			out = append(out, s)
		}
	}
	return strings.Join(out, " ")
}

// table writes one row per parameter set of scenario: the median of unit for
// each impl, then the ratio jobkit/peer for each peer.
func (r *reporter) table(scenario, unit string, impls, peers []string, extra ...column) {
	base := impls[0]
	r.printf("| params |")
	for _, im := range impls {
		r.printf(" %s %s |", im, unit)
	}
	for _, p := range peers {
		r.printf(" %s/%s |", base, p)
	}
	for _, c := range extra {
		r.printf(" %s |", c.title)
	}
	r.printf("\n|---|")
	for range len(impls) + len(peers) + len(extra) {
		r.printf("--:|")
	}
	r.printf("\n")
	for _, n := range r.rows(scenario, base) {
		r.printf("| %s |", params(n))
		for _, im := range impls {
			v, ok := r.med(withImpl(n, im), unit)
			r.printf(" %s |", maybe(v, ok))
		}
		for _, p := range peers {
			a, ok1 := r.med(n, unit)
			b, ok2 := r.med(withImpl(n, p), unit)
			r.printf(" %s |", ratioText(a, b, ok1 && ok2))
		}
		for _, c := range extra {
			r.printf(" %s |", c.cell(n))
		}
		r.printf("\n")
	}
	r.printf("\n")
}

// column is an extra table column computed from the base impl's name.
type column struct {
	title string
	cell  func(name string) string
}

// medianColumn shows the median of unit for impl.
func (r *reporter) medianColumn(impl, unit string) column {
	return column{title: impl + " " + unit, cell: func(n string) string {
		v, ok := r.med(withImpl(n, impl), unit)
		return maybe(v, ok)
	}}
}

func maybe(v float64, ok bool) string {
	if !ok {
		return "–"
	}
	return num(v)
}

func ratioText(a, b float64, ok bool) string {
	if !ok || b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", a/b)
}

// num formats v with about three significant digits.
func num(v float64) string {
	switch a := math.Abs(v); {
	case v == 0:
		return "0"
	case a >= 1000:
		return fmt.Sprintf("%.0f", v)
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	case a >= 0.01:
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.2g", v)
}

// ratio returns the ratio of the medians of unit of two benchmarks.
func (r *reporter) ratio(a, b, unit string) (float64, bool) {
	x, ok1 := r.med(a, unit)
	y, ok2 := r.med(b, unit)
	if !ok1 || !ok2 || y == 0 {
		return 0, false
	}
	return x / y, true
}

// renderReport returns RESULTS.md and the SVG chart.
func renderReport(d *data, m meta) (md, svg string) {
	r := &reporter{d: d}
	runs := 0
	for _, res := range d.results {
		runs = max(runs, res.runs())
	}

	// Scenario 1.
	m1 := r.scenario1()
	ranked := r.rank(m1.groups)

	// Scenario 2.
	for _, n := range r.rows("Queue_Add", "jobkit") {
		k := d.results[n].keys
		switch k["op"] {
		case "duplicate":
			rat, ok := r.ratio(n, withImpl(n, "clientgo"), "ns/op")
			r.check("2 duplicates", fmt.Sprintf("rejected duplicate Add jobkit ÷ client-go, keys=%s parallel=%s", k["keys"], k["parallel"]), rat, ok, 1.0)
		case "distinct":
			a, ok := r.med(n, "allocs/op")
			r.check("2 duplicates", "jobkit allocs/op of an Add that wakes nobody (distinct keys)", a, ok, 0)
		}
	}
	for _, n := range r.rows("Queue_AddProcess", "jobkit") {
		a, ok := r.med(n, "allocs/item")
		r.check("2 duplicates", "jobkit allocs/item, add then process on one goroutine (nobody waits)", a, ok, 0)
	}

	// Scenario 3.
	for _, n := range r.rows("Requeue", "jobkit") {
		v, ok := r.med(n, "inversions")
		if res := d.results[n]; ok {
			v = maxOf(res.values["inversions"]) // every run, not the median
		}
		r.check("3 requeue", "jobkit order inversions (worst run), "+params(n), v, ok, 0)
	}

	// Scenario 4.
	var small, large string
	for _, n := range r.rows("Scale", "jobkit") {
		k := d.results[n].keys
		rat, ok := r.ratio(n, withImpl(n, "clientgo"), "B/entry")
		r.check("4 scale", "B/entry jobkit ÷ client-go, queued="+k["queued"], rat, ok, 1.2)
		if small == "" {
			small = n
		} else {
			large = n
		}
	}
	if small != "" && large != "" {
		rat, ok := r.ratio(large, small, "take-ns/op")
		r.check("4 scale", fmt.Sprintf("jobkit take+complete latency, queued=%s ÷ queued=%s", d.results[large].keys["queued"], d.results[small].keys["queued"]), rat, ok, 2)
	}

	// Scenario 5.
	s5 := r.schedRows()
	s5keys := r.schedKeyRows()

	// Write.
	r.printf("# Side-by-side benchmarks\n\n")
	r.printf("`distinct` (jobkit) against client-go's `workqueue.NewTyped[K]`, controller-runtime's `priorityqueue.New[K]` and a buffered `chan K` (the floor: no deduplication), with integer keys except where a table names another key kind. ")
	if len(s5.rows) > 0 {
		r.printf("Scenario 5 runs no-op jobs through the scheduler, `sched`, against raw goroutines and worker pools (conc, pond, ants). ")
	}
	r.printf("Generated by `bench/run.sh` (`bench/cmd/report`) on %s from %s; do not edit by hand.\n\n", today(), link(m.raw))
	r.printf("- Machine: %s. The machine is shared and noisy: figures are **medians** of %d runs, and ratios are ratios of medians.\n", machine(d), runs)
	r.printf("- Go: %s.\n", goVersion())
	if m.rev != "" {
		r.printf("- Library measured: jobkit %s.\n", m.rev)
	}
	if len(m.cmds) > 0 {
		r.printf("- Commands, run in rounds: each round runs every command once with `-count=1`, appending to the raw output, and `-count` says how many rounds (so that a slow spell of the shared machine hits every implementation alike):\n\n```sh\n%s\n```\n\n", strings.Join(m.cmds, "\n"))
	}
	if m.hasStat {
		r.printf("- benchstat, one column per implementation with jobkit as the base (confidence intervals, p-values): %s.\n", link(m.benchstat))
	}
	r.printf("- Ratios are jobkit ÷ peer: below 1 jobkit is faster (or smaller).\n\n")

	r.headline(m1, ranked)

	r.printf("## Targets\n\n")
	met, missed, nodata := 0, 0, 0
	for _, t := range r.targets {
		switch {
		case t.met:
			met++
		case t.missing:
			nodata++
		default:
			missed++
		}
	}
	r.printf("%d met, %d missed", met, missed)
	if nodata > 0 {
		r.printf(", %d without data", nodata)
	}
	r.printf(".\n\n")
	if len(m1.groups) > 0 {
		r.printf("Scenario 1, per key kind and path (limits: jobkit ÷ client-go ≤ %s one item at a time and ≤ %s in batches of 16 on path=work, ≤ %s and ≤ %s on path=scope; ÷ chan ≤ %s at (4,4) one item at a time; jobkit allocs/item ≤ %s and ≤ %s on path=work, allocs/batch ≤ %s on path=scope; each row's status is in its table below):\n\n",
			num(clientGoLimits["work"]["1"]), num(clientGoLimits["work"]["16"]), num(clientGoLimits["scope"]["1"]), num(clientGoLimits["scope"]["16"]),
			num(chanLimit), num(workAllocLimits["1"]), num(workAllocLimits["16"]), num(scopeAllocLimit))
		r.printf("| keys | path | status | missed |\n|---|---|---|---|\n")
		for _, g := range m1.groups {
			r.printf("| %s | %s | %s | %s |\n", g.keys, g.path, g.status(), strings.Join(g.missed, "; "))
		}
		r.printf("\n")
	}
	var others []target
	for _, t := range r.targets {
		if t.scenario != "1 MPMC" {
			others = append(others, t)
		}
	}
	if len(others) > 0 {
		r.printf("Other scenarios:\n\n| scenario | figure | value | target | status |\n|---|---|--:|--:|---|\n")
	}
	for _, t := range others {
		v := num(t.value)
		if t.missing {
			v = "–"
		}
		r.printf("| %s | %s | %s | %s | %s |\n", t.scenario, t.what, v, t.limit, t.status())
	}
	r.printf("\n")

	r.section1(m1, ranked, m.svg)

	r.printf("## 2. Duplicate-heavy adds\n\n")
	r.printf("4 producers make b.N adds from a hot key set while 16 consumers hold each item about 10 µs. ns/op is ns per Add; accepted/add is the fraction of adds that created work; processed/add counts items processed while the adds ran; heap-B is the live heap's growth over the run. `jobkit-rerun` is jobkit with `Config.Rerun` (client-go's dirty semantics); plain jobkit rejects an add of an item in progress.\n\n")
	dupImpls := []string{"jobkit", "jobkit-rerun", "clientgo", "priorityqueue"}
	r.table("Duplicates", "ns/op", dupImpls, []string{"clientgo", "priorityqueue"})
	r.printf("These end-to-end figures are not a target: ns per Add mixes rejected duplicates with accepted adds, and the accepted fraction feeds back on itself (more accepted adds, more work, slower adds, more time for consumers to empty the set), so runs are bimodal and spread widely. The target on a rejected duplicate is judged on `BenchmarkQueue_Add/op=duplicate` below.\n\n")
	r.printf("Accepted and processed per Add, heap growth:\n\n")
	r.table("Duplicates", "accepted/add", dupImpls, nil,
		r.medianColumn("jobkit", "processed/add"), r.medianColumn("clientgo", "processed/add"),
		r.medianColumn("jobkit", "heap-B"), r.medianColumn("clientgo", "heap-B"), r.medianColumn("priorityqueue", "heap-B"))
	r.printf("One Add without consumers (`BenchmarkQueue_Add`): `op=duplicate` adds only keys already queued (every add a rejected duplicate); `op=distinct` adds new keys to a queue nobody waits on. The priority queue's adds are asynchronous, so its figure is the cost of buffering an add.\n\n")
	r.table("Queue_Add", "ns/op", []string{"jobkit", "clientgo", "priorityqueue"}, []string{"clientgo", "priorityqueue"},
		r.medianColumn("jobkit", "allocs/op"), r.medianColumn("jobkit", "B/op"), r.medianColumn("clientgo", "allocs/op"))
	r.printf("Add then take-and-complete on one goroutine (`BenchmarkQueue_AddProcess`): nobody ever waits.\n\n")
	ap := r.implsOf("Queue_AddProcess", "jobkit")
	r.table("Queue_AddProcess", "ns/op", ap, ap[1:],
		r.medianColumn("jobkit", "allocs/item"), r.medianColumn("clientgo", "allocs/item"))

	r.printf("## 3. Batch take and failure requeue\n\n")
	r.printf("One consumer, 100,000 keys preloaded in ascending order, every tenth batch fails. jobkit puts a failed batch back in its original position; the peers add it again at the tail. An inversion is a completion of a key smaller than the key completed just before it (retakes are not completions); the figure is the count over one run, whose length depends on b.N.\n\n")
	rq := r.implsOf("Requeue", "jobkit")
	r.table("Requeue", "ns/item", rq, rq[1:])
	r.table("Requeue", "inversions/item", rq, nil)

	r.printf("## 4. Scale\n\n")
	r.printf("100,000 items in progress and 1,000 or 1,000,000 queued. take-ns/op is one take and complete (jobkit: `Process` with max 1; client-go: Get and Done), timed in chunks; ns/op adds the top-up adds. B/entry is the live heap's growth per queued key on a queue of its own (the channel's buffer); B/inprogress per in-progress item includes jobkit's scope per Take.\n\n")
	all := r.implsOf("Scale", "jobkit")
	r.table("Scale", "take-ns/op", all, all[1:])
	r.table("Scale", "B/entry", all, []string{"clientgo", "priorityqueue"})
	r.table("Scale", "B/inprogress", all, []string{"clientgo"})
	r.section5(s5, m.schedSVG)
	r.sectionKeys(s5keys)
	r.sectionAddAll()
	r.sectionFloor()
	r.section6(m.costs, m.costCmds, m.costsRaw)

	var least *group
	if len(ranked) > 0 {
		least = ranked[0]
	}
	return r.b.String(), r.renderChart(least, m1.impls)
}

func maxOf(vs []float64) float64 {
	m := math.Inf(-1)
	for _, v := range vs {
		m = math.Max(m, v)
	}
	return m
}

func link(p string) string { return fmt.Sprintf("[`%s`](%s)", p, p) }

func goVersion() string { return runtime.Version() }
