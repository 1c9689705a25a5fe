package main

import (
	"fmt"
	"strings"
	"testing"
)

// schedGrid writes go test output for scenario 5: two worker counts, adds
// during (p=1) and before; the scheduler's variants in both modes, the
// peers only during. ns is the ns/op of each impl; jobs/s follows from it.
func schedGrid(ns map[string]float64, allocs float64) string {
	var b strings.Builder
	b.WriteString("goos: linux\ngoarch: amd64\ncpu: test\n")
	for _, w := range []int{4, 64} {
		for _, mode := range []string{"adds=during/p=1", "adds=before/p=1"} {
			for _, im := range []string{"sched-b1", "sched-b16", "sched-b16-r0", "goroutines", "pond", "ants"} {
				if mode == "adds=before/p=1" && !isSched(im) {
					continue
				}
				v := ns[im]
				fmt.Fprintf(&b, "BenchmarkSched_NoOp/workers=%d/%s/impl=%s-2 1000 %g ns/op %g allocs/job %g jobs/s 0 B/op 0 allocs/op\n",
					w, mode, im, v, allocs, 1e9/v)
			}
		}
	}
	return b.String()
}

func TestReportSched(t *testing.T) {
	t.Parallel()
	d, err := parse(strings.NewReader(schedGrid(map[string]float64{
		"sched-b1": 2000, "sched-b16": 800, "sched-b16-r0": 700,
		"goroutines": 300, "pond": 600, "ants": 1000,
	}, 0.5)))
	if err != nil {
		t.Fatal(err)
	}
	md, _ := renderReport(d, meta{schedSVG: "sched.svg"})
	sec := md[strings.Index(md, "## 5. Scheduler"):]

	// Targets: the best default-retention variant (sched-b16, not the
	// faster sched-b16-r0) against the fastest pool (pond, not the faster
	// goroutines), only for adds=during.
	for _, want := range []string{
		"| 5 sched | no-op jobs/s, sched-b16 (workers=4 adds=during p=1) | 1250000 | ≥ 1000000 | met |",
		"| 5 sched | time/job sched-b16 ÷ the fastest pool, pond, workers=64 adds=during p=1 | 1.33 | ≤ 1.50 | met |",
		"| 5 sched | allocs/job sched-b16, workers=4 adds=during p=1 | 0.500 | ≤ 0.001 | **missed** |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("missing target %q in\n%s", want, md[strings.Index(md, "## Targets"):strings.Index(md, "## 1.")])
		}
	}
	if strings.Contains(md, "adds=before p=1 |") && strings.Contains(md, "| 5 sched | no-op jobs/s, sched-b16 (workers=4 adds=before") {
		t.Error("a target for adds=before, which the peers do not run")
	}

	// The medians, and the ratios with the best variant marked; the
	// peers' cells are empty under adds=before.
	wantAll(t, sec,
		"| 4 during 1 | 2000 | 800 | 700 | 300 | 600 | 1000 |",
		"| 4 before 1 | 2000 | 800 | 700 | – | – | – |",
		"| 4 during 1 | sched-b16 ✱ | 1250000 | 0.500 | 2.67 | 1.33 | 0.80 | 1.33 (pond) |",
		"| 64 before 1 | sched-b16-r0 | 1428571 | 0.500 | – | – | – | – |",
		"![time per job against workers](sched.svg)",
	)

	svg, ok := renderSchedChart(d)
	if !ok {
		t.Fatal("no chart")
	}
	for _, want := range []string{"adds=during, p=1", "adds=before, p=1", "sched-b16-r0 workers=64: 700 ns/job", `stroke-dasharray="6 4"`} {
		if !strings.Contains(svg, want) {
			t.Errorf("chart without %q", want)
		}
	}
}

func TestReportWithoutSched(t *testing.T) {
	t.Parallel()
	d, err := parse(strings.NewReader(grid(map[string]float64{"ordered/work": 0.5, "ordered/scope": 0.5, "string/work": 0.5, "string/scope": 0.5})))
	if err != nil {
		t.Fatal(err)
	}
	md, _ := renderReport(d, meta{})
	if strings.Contains(md, "## 5.") || strings.Contains(md, "5 sched") {
		t.Error("a scenario-5 section without its results")
	}
	if _, ok := renderSchedChart(d); ok {
		t.Error("a scenario-5 chart without its results")
	}
}

// The key kinds' rows come in order of ÷ pond, the least favourable first
// whatever the order of the run, carry their own targets, and the floor's
// parts are shown against pond.
func TestReportSchedKeysAndFloor(t *testing.T) {
	t.Parallel()
	out := "goos: linux\ngoarch: amd64\ncpu: test\n" +
		"BenchmarkSched_NoOpKeys/keys=int/impl=sched-b64-2 1000 800 ns/op 0.0002 allocs/job 1250000 jobs/s 0 B/op 0 allocs/op\n" +
		"BenchmarkSched_NoOpKeys/keys=int/impl=pond-2 1000 160 ns/op 1 allocs/job 6250000 jobs/s 40 B/op 1 allocs/op\n" +
		"BenchmarkSched_NoOpKeys/keys=string/impl=sched-b64-2 1000 1100 ns/op 2 allocs/job 909091 jobs/s 32 B/op 2 allocs/op\n" +
		"BenchmarkSched_NoOpKeys/keys=string/impl=pond-2 1000 150 ns/op 1 allocs/job 6666667 jobs/s 40 B/op 1 allocs/op\n" +
		"BenchmarkSched_NoOpKeys/keys=ranges/impl=sched-b64-2 1000 1300 ns/op 0.0003 allocs/job 769231 jobs/s 0 B/op 0 allocs/op\n" +
		"BenchmarkSched_NoOpKeys/keys=ranges/impl=pond-2 1000 200 ns/op 1 allocs/job 5000000 jobs/s 40 B/op 1 allocs/op\n" +
		"BenchmarkSched_Floor/part=clock-2 1000 56 ns/op 0 B/op 0 allocs/op\n" +
		"BenchmarkSched_Floor/part=memory-2 1000 340 ns/op 1 B/op 0 allocs/op\n" +
		"BenchmarkSched_Floor/part=scheduler-2 1000 272 ns/op 0.0001 allocs/job 3676471 jobs/s 1 B/op 0 allocs/op\n" +
		"BenchmarkSched_Floor/part=lean-2 1000 170 ns/op 0.0007 allocs/job 5882353 jobs/s 0 B/op 0 allocs/op\n" +
		"BenchmarkSched_Floor/part=lean-map-2 1000 150 ns/op 0 allocs/job 6666667 jobs/s 0 B/op 0 allocs/op\n" +
		"BenchmarkSched_Floor/part=pond-2 1000 136 ns/op 1 allocs/job 7352941 jobs/s 40 B/op 1 allocs/op\n" +
		"BenchmarkSched_AddAll/keys=int/impl=sched-b64-2 1000 600 ns/op 0.0002 allocs/job 1666667 jobs/s 0 B/op 0 allocs/op\n" +
		"BenchmarkSched_AddAll/keys=int/impl=sched-b64-all-2 1000 480 ns/op 0.016 allocs/job 2083333 jobs/s 17 B/op 0 allocs/op\n" +
		"BenchmarkSched_AddAll/keys=int/impl=pond-2 1000 120 ns/op 1 allocs/job 8333333 jobs/s 40 B/op 1 allocs/op\n" +
		"BenchmarkSched_AddAll/keys=string/impl=sched-b64-2 1000 700 ns/op 2 allocs/job 1428571 jobs/s 25 B/op 2 allocs/op\n" +
		"BenchmarkSched_AddAll/keys=string/impl=sched-b64-all-2 1000 650 ns/op 2.016 allocs/job 1538462 jobs/s 41 B/op 2 allocs/op\n" +
		"BenchmarkSched_AddAll/keys=string/impl=pond-2 1000 100 ns/op 1 allocs/job 10000000 jobs/s 40 B/op 1 allocs/op\n"
	d, err := parse(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	md, _ := renderReport(d, meta{})
	wantAll(t, md,
		"| 5 sched | no-op jobs/s, sched-b64, keys=string (workers=2×GOMAXPROCS adds=during p=1) | 909091 | ≥ 1000000 | **missed** |",
		"| 5 sched | time/job ÷ pond, sched-b64, keys=int (workers=2×GOMAXPROCS adds=during p=1) | 5.00 | ≤ 1.50 | **missed** |",
		"| string | sched-b64 | 1100 | 909091 | 2.00 | 150 | 7.33 |",
		"| 5 sched | time/job ÷ pond, sched-b64, keys=ranges (workers=2×GOMAXPROCS adds=during p=4, each its own range of IDs) | 6.50 | ≤ 1.50 | **missed** |",
		"| ranges | sched-b64 | 1300 | 769231 | 0.0003 | 200 | 6.50 |",
		"| clock | 56.0 | 0.41 |",
		"| memory | 340 | 2.50 |",
		"| scheduler | 272 | 2.00 |",
		"| lean | 170 | 1.25 |",
		"| lean-map | 150 | 1.10 |",
		"| pond | 136 | 1.00 |",
		"| string | sched-b64-all | 650 | 1538462 | 2.02 | 6.50 | 0.93 |",
		"| int | sched-b64-all | 480 | 2083333 | 0.016 | 4.00 | 0.80 |",
		"| int | sched-b64 | 600 | 1666667 | 0.0002 | 5.00 | 1.00 |",
	)
	a1, a2 := strings.Index(md, "| string | sched-b64 | 700"), strings.Index(md, "| int | sched-b64-all | 480")
	if a1 < 0 || a2 < a1 {
		t.Error("the AddAll table is not in order of ÷ pond, the least favourable (string keys, Add) first")
	}
	s, rg, i := strings.Index(md, "| string | sched-b64"), strings.Index(md, "| ranges | sched-b64"), strings.Index(md, "| int | sched-b64")
	if s < 0 || rg < s || i < rg {
		t.Error("the key kinds' table is not in order of ÷ pond, the least favourable (string keys here) first")
	}
	if strings.Contains(md, "| distinct |") {
		t.Error("a floor part without results")
	}
}

// wantAll fails t for each of wants that text does not contain.
func wantAll(t *testing.T, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("missing %q in\n%s", w, text)
		}
	}
}
