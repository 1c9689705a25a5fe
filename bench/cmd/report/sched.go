package main

import (
	"cmp"
	"fmt"
	"html"
	"math"
	"slices"
	"strconv"
	"strings"
)

// schedScenario is the name of BenchmarkSched_NoOp's results.
const schedScenario = "Sched_NoOp"

// Scenario 5's targets, from the scheduler's issue: no-op jobs per second
// through the scheduler (batching allowed), its time per job ÷ the fastest
// pool's, and its allocations per job in steady state. A median below
// schedAllocLimit is one allocation per thousand jobs or fewer: growth
// amortised over the run, nothing per job.
const (
	schedJobsPerSec = 1_000_000
	schedPoolLimit  = 1.5
	schedAllocLimit = 0.001
)

// schedRun holds what the report computes for scenario 5.
type schedRun struct {
	impls []string // every impl in run order: the scheduler's, then the peers
	rows  []string // one name per parameter set, in run order, with impl=impls[0]
	// best[row] is the scheduler variant with the default retention and
	// the least time per job in the row ("" if none); fastest[row] the pool
	// with the least.
	best, fastest map[string]string
}

// isSched reports whether impl is one of the scheduler's variants.
func isSched(impl string) bool { return strings.HasPrefix(impl, "sched") }

// isPool reports whether impl is a worker pool (not the scheduler and not
// raw goroutines).
func isPool(impl string) bool { return !isSched(impl) && impl != "goroutines" }

// keepsDefault reports whether a scheduler variant keeps the default
// retention of succeeded entries (the -r0 variants keep none).
func keepsDefault(impl string) bool { return !strings.HasSuffix(impl, "-r0") }

// schedRows collects scenario 5 and checks its targets.
func (r *reporter) schedRows() *schedRun {
	sr := &schedRun{best: map[string]string{}, fastest: map[string]string{}}
	seen := map[string]bool{}
	for _, n := range r.d.order {
		res := r.d.results[n]
		if res.keys["scenario"] != schedScenario {
			continue
		}
		if im := res.keys["impl"]; !slices.Contains(sr.impls, im) {
			sr.impls = append(sr.impls, im)
		}
		if p := withImpl(n, ""); !seen[p] {
			seen[p] = true
			sr.rows = append(sr.rows, n)
		}
	}
	if len(sr.impls) == 0 {
		return sr
	}
	for i, n := range sr.rows {
		n = withImpl(n, sr.impls[0])
		sr.rows[i] = n
		sr.best[n] = r.least(n, sr.impls, func(im string) bool { return isSched(im) && keepsDefault(im) })
		sr.fastest[n] = r.least(n, sr.impls, isPool)
	}
	for _, n := range sr.rows {
		k := r.d.results[withImpl(n, sr.best[n])]
		if k == nil || r.d.results[n].keys["adds"] == "before" {
			continue // the peers have no adds=before: no target
		}
		row := schedParams(r.d.results[n].keys)
		best := sr.best[n]
		v, ok := r.med(withImpl(n, best), "jobs/s")
		r.checkAtLeast("5 sched", fmt.Sprintf("no-op jobs/s, %s (%s)", best, row), v, ok, schedJobsPerSec)
		if f := sr.fastest[n]; f != "" {
			rat, ok := r.ratio(withImpl(n, best), withImpl(n, f), "ns/op")
			r.check("5 sched", fmt.Sprintf("time/job %s ÷ the fastest pool, %s, %s", best, f, row), rat, ok, schedPoolLimit)
		}
		a, ok := r.med(withImpl(n, best), "allocs/job")
		r.check("5 sched", fmt.Sprintf("allocs/job %s, %s", best, row), a, ok, schedAllocLimit)
	}
	return sr
}

// least returns the impl among impls that pass keep with the least median
// ns/op in n's row, or "".
func (r *reporter) least(n string, impls []string, keep func(string) bool) string {
	best, bestV := "", math.Inf(1)
	for _, im := range impls {
		if !keep(im) {
			continue
		}
		if v, ok := r.med(withImpl(n, im), "ns/op"); ok && v < bestV {
			best, bestV = im, v
		}
	}
	return best
}

// checkAtLeast records a target: value must be ≥ limit.
func (r *reporter) checkAtLeast(scenario, what string, value float64, ok bool, limit float64) {
	r.targets = append(r.targets, target{
		scenario: scenario,
		what:     what,
		value:    value,
		limit:    "≥ " + num(limit),
		met:      ok && value >= limit,
		missing:  !ok,
	})
}

// schedParams describes a row of scenario 5.
func schedParams(k map[string]string) string {
	return fmt.Sprintf("workers=%s adds=%s p=%s", k["workers"], k["adds"], k["p"])
}

// section5 writes scenario 5: the chart, the medians and the ratios.
func (r *reporter) section5(sr *schedRun, svg string) {
	if len(sr.rows) == 0 {
		return
	}
	var scheds, peers []string
	for _, im := range sr.impls {
		if isSched(im) {
			scheds = append(scheds, im)
		} else {
			peers = append(peers, im)
		}
	}
	r.printf("## 5. Scheduler: no-op jobs through `sched` against goroutines and worker pools\n\n")
	r.printf("`BenchmarkSched_NoOp/workers=<W>/adds=<during|before>/p=<P>/impl=<impl>`. Each implementation runs b.N jobs with distinct int payloads (the scheduler's distinct keys), each job a call that counts it; ns/job is ns/op from the first add to the last job's return, jobs/s its inverse, allocs/job every allocation in the timed window, from any goroutine, per job. Before the timer each run makes 65,536 jobs with P producers adding while they run, so the window is the steady state.\n\n")
	r.printf("- **sched-b<B>**: `sched.New(Config{Workers: W})` (two scheduling loops, the default governor: slots only) with one queue of `BatchSize` B and the default retention (succeeded entries kept a minute, at most 1,000); `-r0`: `Retention{}`, none kept. Every job goes through `Add` (deduplication by key), the governor's permit, a take into a scope, a worker, `Start` and `Settle`. The targets take, in each row, the default-retention variant with the least time per job (batching allowed).\n")
	r.printf("- **goroutines**: one goroutine per job, joined by a `sync.WaitGroup`. **conc**: `pool.New().WithMaxGoroutines(W)`. **pond**: `pond.NewPool(W)` (unbounded queue), `Go`. **ants**: `ants.NewPool(W)`, `Submit` (blocks while full). **ants-func**: `ants.NewPoolWithFuncGeneric[int](W, job)`, `Invoke(id)`, no closure per job. The pools' closures carry the payload: one allocation per job.\n")
	r.printf("- **adds**: `during`: P producers add b.N/P jobs each while they run, at most about 1,024 ahead (one credit per 64 adds, as in scenario 1). `before`: the scheduler only (submitting to a pool runs the job): the jobs are added to a paused queue before the timer, which starts as the queue resumes; the peers' cells are empty.\n\n")
	r.printf("![time per job against workers](%s)\n\n", svg)
	r.printf("Median ns per job:\n\n| workers adds p |")
	for _, im := range sr.impls {
		r.printf(" %s |", im)
	}
	r.printf("\n|---|")
	for range sr.impls {
		r.printf("--:|")
	}
	r.printf("\n")
	for _, n := range sr.rows {
		k := r.d.results[n].keys
		r.printf("| %s %s %s |", k["workers"], k["adds"], k["p"])
		for _, im := range sr.impls {
			v, ok := r.med(withImpl(n, im), "ns/op")
			r.printf(" %s |", maybe(v, ok))
		}
		r.printf("\n")
	}
	r.printf("\nThe scheduler ÷ each peer, time per job (below 1 the scheduler is faster), with its jobs/s and allocs/job; ✱ marks the default-retention variant with the least time per job in each row, the one the targets of adds=during rows take:\n\n")
	r.printf("| workers adds p | impl | jobs/s | allocs/job |")
	for _, p := range peers {
		r.printf(" ÷ %s |", p)
	}
	r.printf(" ÷ fastest pool |\n|---|---|--:|--:|")
	for range peers {
		r.printf("--:|")
	}
	r.printf("--:|\n")
	for _, n := range sr.rows {
		k := r.d.results[n].keys
		for _, im := range scheds {
			m := withImpl(n, im)
			if _, ok := r.d.results[m]; !ok {
				continue
			}
			mark := ""
			if im == sr.best[n] {
				mark = " ✱"
			}
			js, ok1 := r.med(m, "jobs/s")
			al, ok2 := r.med(m, "allocs/job")
			r.printf("| %s %s %s | %s%s | %s | %s |", k["workers"], k["adds"], k["p"], im, mark, maybe(js, ok1), maybe(al, ok2))
			for _, p := range peers {
				rat, ok := r.ratio(m, withImpl(n, p), "ns/op")
				r.printf(" %s |", ratioText(rat, 1, ok))
			}
			f := sr.fastest[n]
			rat, ok := r.ratio(m, withImpl(n, f), "ns/op")
			if ok {
				r.printf(" %s (%s) |\n", ratioText(rat, 1, ok), f)
			} else {
				r.printf(" – |\n")
			}
		}
	}
	r.printf("\n")
}

// renderSchedChart draws scenario 5 as SVG: median ns per job against the
// number of workers, one panel per adds=/p= mode, one line per
// implementation (the scheduler's variants in blues, those without
// retention dashed), both axes logarithmic. It returns false if there are
// no scenario-5 results.
func renderSchedChart(d *data) (string, bool) {
	r := &reporter{d: d}
	sr := r.schedRows()
	if len(sr.rows) == 0 {
		return "", false
	}
	type point struct{ w, ns float64 }
	lines := map[string]map[string][]point{} // mode → impl → points
	var ws []float64
	var modes []string
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, n := range sr.rows {
		k := d.results[n].keys
		w, err := strconv.ParseFloat(k["workers"], 64)
		if err != nil {
			continue
		}
		mode := "adds=" + k["adds"] + ", p=" + k["p"]
		for _, im := range sr.impls {
			ns, ok := r.med(withImpl(n, im), "ns/op")
			if !ok || ns <= 0 {
				continue
			}
			if lines[mode] == nil {
				lines[mode] = map[string][]point{}
				modes = append(modes, mode)
			}
			lines[mode][im] = append(lines[mode][im], point{w, ns})
			lo, hi = math.Min(lo, ns), math.Max(hi, ns)
			if !slices.Contains(ws, w) {
				ws = append(ws, w)
			}
		}
	}
	slices.Sort(ws)
	if len(modes) == 0 || len(ws) == 0 {
		return "", false
	}

	const (
		panelW, panelH = 360.0, 300.0
		left, right    = 70.0, 20.0
		top, bottom    = 70.0, 60.0
		legendRow      = 22.0
	)
	legendRows := (len(sr.impls) + 4) / 5
	width := left + float64(len(modes))*(panelW+right)
	height := top + panelH + bottom + 10 + float64(legendRows)*legendRow
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%.0f" y="20" font-size="15" font-weight="bold">Scenario 5, no-op jobs: median ns per job against workers (log–log)</text>`+"\n", left)
	fmt.Fprintf(&b, `<text x="%.0f" y="40" font-size="13">%s</text>`+"\n", left, html.EscapeString("sched (one queue, full path: dedup, governor, scope, settle) against raw goroutines and worker pools"))
	ylo := math.Pow(10, math.Floor(math.Log10(lo)))
	yhi := math.Pow(10, math.Ceil(math.Log10(hi)))
	xlo, xhi := math.Log10(ws[0]), math.Log10(ws[len(ws)-1])
	pad := 0.1 * math.Max(xhi-xlo, 0.5)
	xlo, xhi = xlo-pad, xhi+pad
	for i, mode := range modes {
		x0 := left + float64(i)*(panelW+right)
		px := func(w float64) float64 { return x0 + (math.Log10(w)-xlo)/(xhi-xlo)*panelW }
		py := func(ns float64) float64 {
			return top + panelH - (math.Log10(ns)-math.Log10(ylo))/(math.Log10(yhi)-math.Log10(ylo))*panelH
		}
		panelFrame(&b, panel{first: i == 0, x0: x0, top: top, w: panelW, h: panelH, ylo: ylo, yhi: yhi, py: py, xs: ws, px: px},
			mode, "workers W")
		for j, im := range sr.impls {
			pts := lines[mode][im]
			if len(pts) == 0 {
				continue
			}
			slices.SortFunc(pts, func(a, b point) int { return cmp.Compare(a.w, b.w) })
			color, dash, fill := schedColor(im, j), "", schedColor(im, j)
			if isSched(im) && !keepsDefault(im) {
				dash, fill = ` stroke-dasharray="6 4"`, "white"
			}
			var path []string
			for _, p := range pts {
				path = append(path, fmt.Sprintf("%.1f,%.1f", px(p.w), py(p.ns)))
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s" stroke="%s"><title>%s workers=%g: %.0f ns/job</title></circle>`+"\n", px(p.w), py(p.ns), fill, color, im, p.w, p.ns)
			}
			fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", strings.Join(path, " "), color, dash)
		}
	}
	fmt.Fprintf(&b, `<text transform="translate(16,%.0f) rotate(-90)" text-anchor="middle">ns per job (median)</text>`+"\n", top+panelH/2)
	for i, im := range sr.impls {
		x := left + float64(i%5)*150
		y := top + panelH + 62 + float64(i/5)*legendRow
		dash := ""
		if isSched(im) && !keepsDefault(im) {
			dash = ` stroke-dasharray="6 4"`
		}
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="%s" stroke-width="3"%s/><text x="%.0f" y="%.0f">%s</text>`+"\n", x, y-3, x+18, y-3, schedColor(im, i), dash, x+24, y+1, html.EscapeString(im))
	}
	b.WriteString("</svg>\n")
	return b.String(), true
}

// schedColor is the colour of a scenario-5 implementation: blues for the
// scheduler's variants by batch size, the known peers' own, spare ones by
// position for the rest.
func schedColor(impl string, i int) string {
	switch {
	case strings.HasPrefix(impl, "sched-b1-") || impl == "sched-b1":
		return "#9ecae1"
	case strings.HasPrefix(impl, "sched-b16"):
		return "#1f77b4"
	case strings.HasPrefix(impl, "sched-b64"):
		return "#08306b"
	}
	return implColor(impl, i)
}
