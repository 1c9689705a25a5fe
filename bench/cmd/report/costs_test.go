package main

import (
	"strings"
	"testing"
)

// costsOutput is go test output for section 6, two runs of each line with
// the median in between: the cron engine, cron's schedules with a row
// without a peer, governor with a row whose peers run without its key, and
// distinct with Timestamps off and on.
const costsOutput = `jobkit-rev: abc1234
goos: linux
pkg: github.com/jobkit/jobkit/bench
BenchmarkCron_Register/impl=jobkit-2 2000 100 ns/op 900 heap-B/job 0 goroutines/job
BenchmarkCron_Register/impl=gocron-2 2000 400 ns/op 1000 heap-B/job 0 goroutines/job
BenchmarkCron_Run/impl=jobkit-2 2000 1000000 ns/op 5000 cpu-ns/run 7 allocs/op
BenchmarkCron_Run/impl=gocron-2 2000 1000000 ns/op 10000 cpu-ns/run 14 allocs/op
pkg: github.com/jobkit/jobkit/cron
BenchmarkSpec_Next/impl=jobkit/spec=fast-2 1000 100 ns/op 0 allocs/op
BenchmarkSpec_Next/impl=robfig/spec=fast-2 1000 1000 ns/op 0 allocs/op
BenchmarkSpec_Next/impl=jobkit/spec=slow-2 1000 300 ns/op 0 allocs/op
BenchmarkSpec_Next/impl=robfig/spec=slow-2 1000 200 ns/op 0 allocs/op
BenchmarkDue/policy=Skip-2 1000 50 ns/op 0 allocs/op
BenchmarkDue/policy=RunEach100-2 1000 5000 ns/op 8 allocs/op
pkg: github.com/jobkit/jobkit/governor
BenchmarkGovernor_TryAcquire/impl=governor/key=none-2 1000 5 ns/op 0 allocs/op
BenchmarkGovernor_TryAcquire/impl=governor/key=queue-2 1000 40 ns/op 0 allocs/op
BenchmarkGovernor_TryAcquire/impl=chan-2 1000 50 ns/op 0 allocs/op
BenchmarkGovernor_TryAcquire/impl=mutex-2 1000 10 ns/op 0 allocs/op
BenchmarkGovernor_TryAcquireRelease/impl=governor-2 1000 9 ns/op 0 allocs/op
BenchmarkGovernor_TryAcquireRelease/impl=x-sync-semaphore-2 1000 12 ns/op 0 allocs/op
BenchmarkGovernor_Acquire-2 1000 30 ns/op 0 allocs/op
pkg: github.com/jobkit/jobkit/distinct
BenchmarkQueue_TakeComplete/impl=Process/batch=1-2 1000 100 ns/op 100 ns/item 0 allocs/op
BenchmarkQueue_TakeComplete/impl=Process/batch=1/timestamps=on-2 1000 150 ns/op 150 ns/item 0 allocs/op
BenchmarkQueue_TakeComplete/impl=Process/batch=16-2 1000 800 ns/op 50 ns/item 0 allocs/op
BenchmarkQueue_TakeComplete/impl=Process/batch=16/timestamps=on-2 1000 1600 ns/op 100 ns/item 0 allocs/op
`

// section returns the part of md from the heading head to the next heading
// of a level up to level's.
func section(t *testing.T, md, head string) string {
	t.Helper()
	i := strings.Index(md, head+"\n")
	if i < 0 {
		t.Fatalf("no %q in\n%s", head, md)
	}
	s := md[i+len(head):]
	if j := strings.Index(s, "\n#"); j >= 0 {
		s = s[:j]
	}
	return s
}

// inOrder fails unless every want is in s, in that order.
func inOrder(t *testing.T, s string, want ...string) {
	t.Helper()
	last := -1
	for _, w := range want {
		i := strings.Index(s, w)
		if i < 0 || i < last {
			t.Fatalf("want, in this order, %q in\n%s", want, s)
		}
		last = i
	}
}

func TestCostsSectionLeadsWithTheLeastFavourable(t *testing.T) {
	t.Parallel()
	grid, err := parse(strings.NewReader(grid(map[string]float64{"ordered/work": 0.5})))
	if err != nil {
		t.Fatal(err)
	}
	c, err := parse(strings.NewReader(costsOutput + costsOutput))
	if err != nil {
		t.Fatal(err)
	}
	md, _ := renderReport(grid, meta{svg: "chart.svg", costs: c, costsRaw: "results/costs.txt", costCmds: []string{"go test ./cron"}})
	s6 := md[strings.Index(md, "## 6. "):]
	for _, want := range []string{"[`results/costs.txt`](results/costs.txt)", "jobkit abc1234", "medians of 2 runs", "```sh\ngo test ./cron\n```"} {
		if !strings.Contains(s6, want) {
			t.Errorf("no %q in\n%s", want, s6)
		}
	}

	// The engine: ratios to gocron, the largest first.
	inOrder(t, section(t, s6, "### 6.1 cron: the engine against gocron"),
		"| Cron_Register | live heap a registered job holds (heap-B/job) | 900 | 1000 | 0.90 |",
		"| Cron_Run | allocations per run (allocs/op) | 7.00 | 14.0 | 0.50 |",
		"| Cron_Register | time to register a job (ns/op) | 100 | 400 | 0.25 |",
		"| Cron_Register | goroutines a registered job adds (goroutines/job) | 0 | 0 | – |")

	// Schedules: slow (1.5 × robfig) before fast though it ran second;
	// Due, without a peer, last, the slowest first.
	inOrder(t, section(t, s6, "### 6.2 cron: schedules against robfig/cron"),
		"| Spec_Next | spec=slow | 300 | 0 | 200 | 1.50 |",
		"| Spec_Next | spec=fast | 100 | 0 | 1000 | 0.10 |",
		"| Due | policy=RunEach100 | 5000 | 8.00 | – | – |",
		"| Due | policy=Skip | 50.0 | 0 | – | – |")

	// Governor: key=queue is compared with the keyless peers of its
	// benchmark (4 × mutex), and only with those.
	inOrder(t, section(t, s6, "### 6.4 governor: TryAcquire and Acquire"),
		"| Governor_TryAcquire | key=queue | 40.0 | 0 | 50.0 | 0.80 | 10.0 | 4.00 | – | – |",
		"| Governor_TryAcquireRelease | – | 9.00 | 0 | – | – | – | – | 12.0 | 0.75 |",
		"| Governor_TryAcquire | key=none | 5.00 | 0 | 50.0 | 0.10 | 10.0 | 0.50 | – | – |",
		"| Governor_Acquire | – | 30.0 | 0 | – | – | – | – | – | – |")

	// Timestamps: on ÷ off per item, the largest first.
	inOrder(t, section(t, s6, "### 6.5 distinct: Config.Timestamps"),
		"| impl=Process batch=16 | 50.0 | 100 | 2.00 | 0 | 0 |",
		"| impl=Process batch=1 | 100 | 150 | 1.50 | 0 | 0 |")

	// No results of a subsection, no subsection.
	if strings.Contains(s6, "### 6.3") {
		t.Errorf("a scope subsection without scope results:\n%s", s6)
	}
}

func TestNoCostsNoSection(t *testing.T) {
	t.Parallel()
	d, err := parse(strings.NewReader(grid(map[string]float64{"ordered/work": 0.5})))
	if err != nil {
		t.Fatal(err)
	}
	without, _ := renderReport(d, meta{svg: "chart.svg"})
	if strings.Contains(without, "## 6.") {
		t.Errorf("a section 6 without -costs")
	}
	c, err := parse(strings.NewReader(costsOutput))
	if err != nil {
		t.Fatal(err)
	}
	with, _ := renderReport(d, meta{svg: "chart.svg", costs: c})
	if !strings.HasPrefix(with, without) {
		t.Errorf("-costs changed the report before section 6")
	}
}
