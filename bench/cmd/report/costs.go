package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Section 6: the packages' own costs, from a second results file (-costs)
// that bench/run.sh fills in the same rounds as the grid: the cron engine
// against gocron (BenchmarkCron_Register, BenchmarkCron_Run), and the
// in-package benchmarks of cron (against robfig/cron), scope, governor
// (against x/sync's semaphore, a channel and a mutex) and distinct
// (Config.Timestamps on against off). The package docs state contracts and
// complexity and link here for the figures, so the subsections' numbers
// (6.1 to 6.5) are part of the report's interface: keep them.

// costSub is one subsection of section 6 that compares a package's rows
// (impl=base, or no impl at all) with the peers in the same benchmarks.
type costSub struct {
	title      string
	intro      string
	scenarios  []string // benchmark names without "Benchmark", first segment
	base       string   // the package's impl; rows without an impl have no peer
	ratioUnit  string   // the unit of the ratios, and of the no-peer rows' order
	shownUnits []string // medians shown for the package's rows
}

var costSubs = []costSub{
	{
		title:      "6.2 cron: schedules against robfig/cron",
		intro:      "`cron/bench_test.go`: `Parse` of a spec (six fields, five, or a descriptor) in a location, `Next` of a parsed spec from 64 starting points spread over a year, `Every`'s `Next`, against robfig/cron/v3's parser and `SpecSchedule.Next` (which steps through hours and days) and `Every` in the same run; and `Due` for a job that fires every second, down for a year, under each missed-run policy (no peer).",
		scenarios:  []string{"Parse", "Spec_Next", "Every_Next", "Due"},
		base:       "jobkit",
		ratioUnit:  "ns/op",
		shownUnits: []string{"ns/op", "allocs/op"},
	},
	{
		title:      "6.3 scope: Run",
		intro:      "`scope/bench_test.go`: `scope.Run` around a function that does nothing, and with one finalizer registered and run; serial, and from both cores at once (no peer).",
		scenarios:  []string{"Run"},
		ratioUnit:  "ns/op",
		shownUnits: []string{"ns/op", "allocs/op", "B/op"},
	},
	{
		title:      "6.4 governor: TryAcquire and Acquire",
		intro:      "`governor/bench_test.go`, from both cores at once: a granted `TryAcquire` of the zero `Weight` and its `Release`, without a key and with one (`key=queue`: usage accounting), of one byte of memory (most tries fail once the room until the next sample is spent), and a refusal over the CPU limit (the check alone), against a buffered channel and a mutex-guarded counter in the same benchmark (`Governor_TryAcquire`), and against golang.org/x/sync/semaphore's `TryAcquire` and `Release` (`Governor_TryAcquireRelease`); then an uncontended `Acquire` and `Release` on one goroutine (no peer).",
		scenarios:  []string{"Governor_TryAcquire", "Governor_TryAcquireRelease", "Governor_Acquire"},
		base:       "governor",
		ratioUnit:  "ns/op",
		shownUnits: []string{"ns/op", "allocs/op"},
	},
}

// cronEngineUnits are the figures of the cron engine's table, per benchmark.
var cronEngineUnits = []struct{ bench, unit, what string }{
	{"Cron_Register", "ns/op", "time to register a job"},
	{"Cron_Register", "B/op", "bytes allocated registering a job"},
	{"Cron_Register", "allocs/op", "allocations registering a job"},
	{"Cron_Register", "heap-B/job", "live heap a registered job holds"},
	{"Cron_Register", "goroutines/job", "goroutines a registered job adds"},
	{"Cron_Run", "cpu-ns/run", "CPU time of the process per run"},
	{"Cron_Run", "B/op", "bytes allocated per run"},
	{"Cron_Run", "allocs/op", "allocations per run"},
	{"Cron_Run", "late-µs/run", "lateness of a run after its second"},
	{"Cron_Run", "goroutines", "goroutines of the scheduler and its jobs"},
}

// section6 writes the packages' own costs from c, the -costs results, or
// nothing if there are none.
func (r *reporter) section6(c *data, cmds []string, raw string) {
	if c == nil || len(c.order) == 0 {
		return
	}
	cr := &reporter{d: c}
	runs := 0
	for _, res := range c.results {
		runs = max(runs, res.runs())
	}
	cr.printf("## 6. The packages' own costs\n\n")
	cr.printf("The figures the package docs link to instead of quoting them: each package's benchmarks against the nearest peer in the same run where there is one. From %s", link(raw))
	if rev := c.hdr["jobkit-rev"]; rev != "" {
		cr.printf(", measuring jobkit %s", rev)
	}
	cr.printf("; medians of %d runs, on the machine above. Ratios are the package's ÷ the peer's, below 1 the package is faster (or smaller); tables lead with the least favourable row. Commands, run in rounds as the scenarios' are (each round runs each command once with `-count=1`; those without `cd bench` run from the repository's root):\n\n", runs)
	if len(cmds) > 0 {
		cr.printf("```sh\n%s\n```\n\n", strings.Join(cmds, "\n"))
	}
	cr.cronEngine()
	for _, s := range costSubs {
		cr.costTable(s)
	}
	cr.timestamps()
	r.b.WriteString(cr.b.String())
}

// cronEngine writes 6.1: one row per figure of BenchmarkCron_Register and
// BenchmarkCron_Run, the engine against each gocron variant, the largest
// ratio first.
func (r *reporter) cronEngine() {
	var peers []string
	for _, n := range r.d.order {
		if k := r.d.results[n].keys; k["scenario"] == "Cron_Register" && k["impl"] != "jobkit" && k["impl"] != "" {
			peers = append(peers, k["impl"])
		}
	}
	if _, ok := r.d.results["Cron_Register/impl=jobkit"]; !ok {
		return
	}
	type row struct {
		bench, unit, what string
		worst             float64 // the largest ratio, -1 if none
	}
	var rows []row
	for _, u := range cronEngineUnits {
		n := u.bench + "/impl=jobkit"
		if _, ok := r.med(n, u.unit); !ok {
			continue
		}
		w := -1.0
		for _, p := range peers {
			if v, ok := r.ratio(n, withImpl(n, p), u.unit); ok {
				w = max(w, v)
			}
		}
		rows = append(rows, row{u.bench, u.unit, u.what, w})
	}
	slices.SortStableFunc(rows, func(a, b row) int { return cmp.Compare(b.worst, a.worst) })
	r.printf("### 6.1 cron: the engine against gocron\n\n")
	r.printf("`bench/cron_test.go`: `cron.Engine` (default config: one scheduler, 8 × GOMAXPROCS workers; runs of a job never overlap) against github.com/go-co-op/gocron/v2 as configured by default (`gocron`: runs of a job may overlap) and in its singleton mode (`gocron-singleton`: a run due while one is going is skipped, the engine's semantics), in the same run; every job a six-field spec in UTC whose handler does nothing. `Cron_Register`: registering jobs that run once an hour on a started scheduler (so none runs), per job. `Cron_Run`: 1,000 jobs running every second until the count of runs is reached, per run; the wall time per run is the clock's and the same for all. Least favourable first:\n\n")
	r.printf("| benchmark | figure | jobkit |")
	for _, p := range peers {
		r.printf(" %s |", p)
	}
	for _, p := range peers {
		r.printf(" ÷ %s |", p)
	}
	r.printf("\n|---|---|--:|%s\n", strings.Repeat("--:|", 2*len(peers)))
	for _, w := range rows {
		n := w.bench + "/impl=jobkit"
		v, _ := r.med(n, w.unit)
		r.printf("| %s | %s (%s) | %s |", w.bench, w.what, w.unit, num(v))
		for _, p := range peers {
			pv, ok := r.med(withImpl(n, p), w.unit)
			r.printf(" %s |", maybe(pv, ok))
		}
		for _, p := range peers {
			v, ok := r.ratio(n, withImpl(n, p), w.unit)
			r.printf(" %s |", ratioText(v, 1, ok))
		}
		r.printf("\n")
	}
	r.printf("\n")
}

// peerOf returns the name of peer p's result for the package's row n: n
// with its impl segment set to p, or, if there is none, the part of n up
// to its impl segment with impl=p (the peers of a row with more
// parameters, such as governor's key=queue, run without them).
func (r *reporter) peerOf(n, p string) string {
	if w := withImpl(n, p); r.d.results[w] != nil {
		return w
	}
	segs := strings.Split(n, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "impl=") {
			return strings.Join(append(segs[:i:i], "impl="+p), "/")
		}
	}
	return n
}

// costTable writes one subsection: the package's rows, those with a peer
// first, the largest ratio to a peer first, then those without, the
// slowest (the largest median of ratioUnit) first.
func (r *reporter) costTable(s costSub) {
	in := func(sc string) bool { return slices.Contains(s.scenarios, sc) }
	var rows, peers []string
	peersOf := map[string][]string{} // scenario → its peers
	for _, n := range r.d.order {
		k := r.d.results[n].keys
		if !in(k["scenario"]) {
			continue
		}
		switch im := k["impl"]; {
		case im == "" || im == s.base:
			rows = append(rows, n)
		default:
			if !slices.Contains(peersOf[k["scenario"]], im) {
				peersOf[k["scenario"]] = append(peersOf[k["scenario"]], im)
			}
			if !slices.Contains(peers, im) {
				peers = append(peers, im)
			}
		}
	}
	if len(rows) == 0 {
		return
	}
	// worst is the largest ratio of row n to a peer of its benchmark.
	worst := func(n string) (float64, bool) {
		w, has := 0.0, false
		for _, p := range peersOf[r.d.results[n].keys["scenario"]] {
			if v, ok := r.ratio(n, r.peerOf(n, p), s.ratioUnit); ok {
				w, has = max(w, v), true
			}
		}
		return w, has
	}
	slices.SortStableFunc(rows, func(a, b string) int {
		wa, oka := worst(a)
		wb, okb := worst(b)
		switch {
		case oka != okb:
			if oka {
				return -1
			}
			return 1
		case oka:
			return cmp.Compare(wb, wa)
		}
		va, _ := r.med(a, s.ratioUnit)
		vb, _ := r.med(b, s.ratioUnit)
		return cmp.Compare(vb, va)
	})
	r.printf("### %s\n\n%s Least favourable first:\n\n", s.title, s.intro)
	r.printf("| benchmark | case |")
	for _, u := range s.shownUnits {
		r.printf(" %s |", u)
	}
	for _, p := range peers {
		r.printf(" %s %s | ÷ %s |", p, s.ratioUnit, p)
	}
	r.printf("\n|---|---|%s\n", strings.Repeat("--:|", len(s.shownUnits)+2*len(peers)))
	for _, n := range rows {
		k := r.d.results[n].keys
		var cs []string
		for _, seg := range strings.Split(n, "/")[1:] {
			if seg != "impl="+s.base {
				cs = append(cs, seg)
			}
		}
		c := strings.Join(cs, " ")
		if c == "" {
			c = "–"
		}
		r.printf("| %s | %s |", k["scenario"], c)
		for _, u := range s.shownUnits {
			v, ok := r.med(n, u)
			r.printf(" %s |", maybe(v, ok))
		}
		for _, p := range peers {
			if !slices.Contains(peersOf[k["scenario"]], p) {
				r.printf(" – | – |")
				continue
			}
			pn := r.peerOf(n, p)
			pv, ok1 := r.med(pn, s.ratioUnit)
			v, ok2 := r.ratio(n, pn, s.ratioUnit)
			r.printf(" %s | %s |", maybe(pv, ok1), ratioText(v, 1, ok2))
		}
		r.printf("\n")
	}
	r.printf("\n")
}

// timestamps writes 6.5: BenchmarkQueue_TakeComplete with Config.Timestamps
// on against off, per item, in the same run, the largest ratio first.
func (r *reporter) timestamps() {
	const on = "/timestamps=on"
	var rows []string
	for _, n := range r.d.order {
		if r.d.results[n].keys["scenario"] == "Queue_TakeComplete" && !strings.HasSuffix(n, on) {
			if _, ok := r.ratio(n+on, n, "ns/item"); ok {
				rows = append(rows, n)
			}
		}
	}
	if len(rows) == 0 {
		return
	}
	rat := func(n string) float64 { v, _ := r.ratio(n+on, n, "ns/item"); return v }
	slices.SortStableFunc(rows, func(a, b string) int { return cmp.Compare(rat(b), rat(a)) })
	r.printf("### 6.5 distinct: Config.Timestamps\n\n")
	r.printf("`distinct/bench_test.go`: take a batch of 1 or 16 from a queue of 4,096 items, complete it and add its items back, through `Process` or `Take` in a scope, with `Config.Timestamps` off and on (two clock readings per item) in the same run. Least favourable first:\n\n")
	r.printf("| case | off ns/item | on ns/item | on ÷ off | off allocs/op | on allocs/op |\n|---|--:|--:|--:|--:|--:|\n")
	for _, n := range rows {
		off, ok1 := r.med(n, "ns/item")
		onv, ok2 := r.med(n+on, "ns/item")
		a1, ok3 := r.med(n, "allocs/op")
		a2, ok4 := r.med(n+on, "allocs/op")
		r.printf("| %s | %s | %s | %s | %s | %s |\n", strings.Join(strings.Split(n, "/")[1:], " "), maybe(off, ok1), maybe(onv, ok2), fmt.Sprintf("%.2f", rat(n)), maybe(a1, ok3), maybe(a2, ok4))
	}
	r.printf("\n")
}
