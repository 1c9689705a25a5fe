package main

import (
	"cmp"
	"fmt"
	"slices"
)

// keysScenario, floorScenario and addAllScenario name the results of
// BenchmarkSched_NoOpKeys (scenario 5's first row with int and string
// keys), BenchmarkSched_Floor (the work under the backend's lock, per job,
// and the scheduler around a backend that does nearly nothing) and
// BenchmarkSched_AddAll (the producer adding 64 jobs at a time).
const (
	keysScenario   = "Sched_NoOpKeys"
	floorScenario  = "Sched_Floor"
	addAllScenario = "Sched_AddAll"
)

// floorParts are BenchmarkSched_Floor's parts in the order the report
// shows them, pond last.
var floorParts = []string{"distinct", "clock", "memory", "scheduler", "lean", "lean-map", "pond"}

// schedKeyRows returns the scheduler's rows of BenchmarkSched_NoOpKeys,
// the least favourable (the largest time per job ÷ pond) first, and checks
// scenario 5's targets on each: jobs/s and time per job ÷ pond. It checks
// no allocation target: the string keys' allocations are the Key
// function's.
func (r *reporter) schedKeyRows() []string {
	rows := r.schedRowsOf(keysScenario)
	for _, n := range rows {
		k := r.d.results[n].keys
		what := fmt.Sprintf("%s, keys=%s (workers=2×GOMAXPROCS adds=during %s)", k["impl"], k["keys"], keysProducers(k["keys"]))
		v, ok := r.med(n, "jobs/s")
		r.checkAtLeast("5 sched", "no-op jobs/s, "+what, v, ok, schedJobsPerSec)
		rat, ok := r.ratio(n, withImpl(n, "pond"), "ns/op")
		r.check("5 sched", "time/job ÷ pond, "+what, rat, ok, schedPoolLimit)
	}
	return rows
}

// schedRowsOf returns the scheduler's rows of scenario, the least
// favourable (the largest time per job ÷ pond in the same run) first, and
// those without that ratio last.
func (r *reporter) schedRowsOf(scenario string) []string {
	var rows []string
	for _, n := range r.d.order {
		if k := r.d.results[n].keys; k["scenario"] == scenario && isSched(k["impl"]) {
			rows = append(rows, n)
		}
	}
	ratio := func(n string) float64 {
		v, ok := r.ratio(n, withImpl(n, "pond"), "ns/op")
		if !ok {
			return -1 // ratios are positive: last
		}
		return v
	}
	slices.SortStableFunc(rows, func(a, b string) int { return cmp.Compare(ratio(b), ratio(a)) })
	return rows
}

// keysProducers says who adds the keys of BenchmarkSched_NoOpKeys's kind.
func keysProducers(kind string) string {
	if kind == "ranges" {
		return "p=4, each its own range of IDs"
	}
	return "p=1"
}

// sectionKeys writes the key kinds' table of scenario 5.
func (r *reporter) sectionKeys(rows []string) {
	if len(rows) == 0 {
		return
	}
	r.printf("### Key kinds\n\n")
	r.printf("`BenchmarkSched_NoOpKeys/keys=<int|string|ranges>/impl=<sched-b64|pond>`: the first row above (workers = 2 × GOMAXPROCS, producers adding while the jobs run) for sched-b64 with integer keys (the payload itself, one producer), with string keys `\"ns/name-<payload>\"` made by the queue's `Key` function (one string and its allocations per add, one producer), and with integer keys from four producers that each add their own range of IDs in order, against pond in the same run with as many producers; pond has no keys. Least favourable first:\n\n")
	r.printf("| keys | impl | ns/job | jobs/s | allocs/job | pond ns/job | ÷ pond |\n|---|---|--:|--:|--:|--:|--:|\n")
	for _, n := range rows {
		k := r.d.results[n].keys
		pn, ok4 := r.med(withImpl(n, "pond"), "ns/op")
		rat, ok5 := r.ratio(n, withImpl(n, "pond"), "ns/op")
		r.printf("| %s | %s | %s | %s | %s |\n", k["keys"], k["impl"], r.jobCells(n), maybe(pn, ok4), ratioText(rat, 1, ok5))
	}
	r.printf("\n")
}

// sectionAddAll writes BenchmarkSched_AddAll's table: for each key kind,
// sched-b64 adding one job at a time (Add) and 64 at a time (AddAll),
// against pond in the same run, the least favourable (the largest time per
// job ÷ pond) first.
func (r *reporter) sectionAddAll() {
	rows := r.schedRowsOf(addAllScenario)
	if len(rows) == 0 {
		return
	}
	r.printf("### Adding 64 jobs at a time\n\n")
	r.printf("`BenchmarkSched_AddAll/keys=<int|string>/impl=<sched-b64|sched-b64-all|pond>`: the key kinds' first two rows again, with a third column in the same run: `sched-b64-all` is the same scheduler, whose producer adds its jobs 64 at a time with `Queue.AddAll` (one reading of the Clock, and one hold of `Memory`'s lock, for the 64) instead of one at a time with `Add`. pond has no call that submits several jobs, and submits them one at a time. Least favourable first:\n\n")
	r.printf("| keys | impl | ns/job | jobs/s | allocs/job | ÷ pond | ÷ sched-b64 |\n|---|---|--:|--:|--:|--:|--:|\n")
	for _, n := range rows {
		k := r.d.results[n].keys
		rp, ok4 := r.ratio(n, withImpl(n, "pond"), "ns/op")
		rs, ok5 := r.ratio(n, withImpl(n, "sched-b64"), "ns/op")
		r.printf("| %s | %s | %s | %s | %s |\n", k["keys"], k["impl"], r.jobCells(n), ratioText(rp, 1, ok4), ratioText(rs, 1, ok5))
	}
	r.printf("\n")
}

// jobCells returns the ns/job, jobs/s and allocs/job cells of row n, as
// table cells joined by " | ".
func (r *reporter) jobCells(n string) string {
	ns, ok1 := r.med(n, "ns/op")
	js, ok2 := r.med(n, "jobs/s")
	al, ok3 := r.med(n, "allocs/job")
	return maybe(ns, ok1) + " | " + maybe(js, ok2) + " | " + maybe(al, ok3)
}

// sectionFloor writes BenchmarkSched_Floor: the median ns per job of each
// part, and each ÷ pond.
func (r *reporter) sectionFloor() {
	pond, ok := r.med(floorScenario+"/part=pond", "ns/op")
	if !ok {
		return
	}
	r.printf("### The floor: the backend's lock, and the scheduler around it\n\n")
	r.printf("`BenchmarkSched_Floor/part=<part>`: per job, in one goroutine, the work every job of sched-b64 does under the lock of its queue's in-memory backend, against pond's whole time per job (the first row above) in the same run. `distinct`: the FIFO, a `distinct.Queue` of pointers (Add, TakeAppend in a scope, the scope's close); `clock`: the two clock readings of a job, as the scheduler's default clock reads them; `memory`: `sched.Memory` itself (Add, Take in a scope, Start, Settle, the close), which holds the FIFO and an index of the live keys for the duplicate check, without a clock. About 1,024 jobs are queued ahead and they are taken 64 at a time, as in the row above. `scheduler`: the other side, the row above itself (on all cores) for sched-b64 on a backend that does nearly nothing (a FIFO under a lock: no duplicate check, no states, counts or retention; `bench/nullbackend_test.go`). `lean`: the same row for the leanest pipeline of the target's shape (`bench/lean_test.go`): a `distinct.Queue` keyed by the job's key, an add with one clock reading, workers taking 64 keys into a scope, one clock reading a run, the scope's close as the settle, and none of the scheduler's layers (loops apart from the workers, IDs, priorities, states and counts, retention, outcomes); `lean-map`: the same with a Go map of the live keys and a slice FIFO under one mutex in place of the `distinct.Queue` and its scope.\n\n")
	r.printf("| part | ns/job | ÷ pond |\n|---|--:|--:|\n")
	for _, p := range floorParts {
		v, ok := r.med(floorScenario+"/part="+p, "ns/op")
		if !ok {
			continue
		}
		r.printf("| %s | %s | %s |\n", p, num(v), ratioText(v, pond, true))
	}
	r.printf("\nEvery call of `sched.Memory` holds its one lock, so the backend serves jobs one after another whatever the number of cores: `memory` ÷ pond is a lower bound on sched-b64 ÷ pond on this backend, and the target of %s needs it below %s first. `distinct` is what any backend built on a `distinct.Queue` (the design's embedded default) pays per job under its lock. `scheduler` ÷ pond is a lower bound on sched-b64 ÷ pond on any backend: what the scheduler costs around one that does nothing; `clock` is part of it. `lean` ÷ pond is what deduplication on `distinct`, the scope and the clock cost together in the target's shape: at or below %s, the target is within reach of a scheduler whose own layers cost little beside them. `lean-map` ÷ pond is the same without `distinct`.\n\n", num(schedPoolLimit), num(schedPoolLimit), num(schedPoolLimit))
}
