// Command report turns the output of the bench module's benchmarks (go test
// -bench, several runs each) into RESULTS.md: medians per scenario, impl and
// parameters, ratios of jobkit to each peer, every target of the
// side-by-side issues marked met or missed, an SVG chart of time per item
// against consumer count, and one of scenario 5 (no-op jobs through the
// scheduler against worker pools): time per job against workers.
// bench/run.sh calls it.
//
// Scenario 1 gets one table per key kind and path (keys= and path= in the
// benchmark names), a headline that ranks them least favourable first (by
// the geometric mean of jobkit ÷ client-go over the table's rows), and a
// chart of the least favourable. Peers with no result under path=scope (they have one consumer
// loop, measured under path=work) are compared through their path=work
// figures.
//
// Usage:
//
//	go run ./cmd/report -in results/bench.txt -out RESULTS.md -svg results/chart.svg -schedsvg results/sched.svg
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

func main() {
	in := flag.String("in", "results/bench.txt", "go test -bench output")
	out := flag.String("out", "RESULTS.md", "Markdown report to write")
	svg := flag.String("svg", "results/chart.svg", "SVG chart to write")
	schedSVG := flag.String("schedsvg", "results/sched.svg", "SVG chart of scenario 5 (the scheduler) to write, if -in has its results")
	bstat := flag.String("benchstat", "results/benchstat.txt", "benchstat output to link (may be missing)")
	var cmds multi
	flag.Var(&cmds, "cmd", "a command that produced -in, quoted in the report (repeatable)")
	rev := flag.String("rev", "", "the revision of the library measured, quoted in the report")
	costs := flag.String("costs", "", "go test -bench output of the packages' own costs (section 6), if any")
	var costCmds multi
	flag.Var(&costCmds, "costcmd", "a command that produced -costs, quoted in the report (repeatable)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("report: ")

	f, err := os.Open(*in)
	if err != nil {
		log.Fatal(err)
	}
	d, err := parse(f)
	f.Close()
	if err != nil {
		log.Fatal(err)
	}
	if len(d.order) == 0 {
		log.Fatalf("%s: no benchmark results", *in)
	}
	rel := func(p string) string {
		r, err := filepath.Rel(filepath.Dir(*out), p)
		if err != nil {
			return p
		}
		return filepath.ToSlash(r)
	}
	var cd *data
	if *costs != "" {
		f, err := os.Open(*costs)
		if err != nil {
			log.Fatal(err)
		}
		cd, err = parse(f)
		f.Close()
		if err != nil {
			log.Fatal(err)
		}
	}
	md, chart := renderReport(d, meta{
		cmds:      cmds,
		rev:       *rev,
		raw:       rel(*in),
		svg:       rel(*svg),
		schedSVG:  rel(*schedSVG),
		benchstat: rel(*bstat),
		hasStat:   exists(*bstat),
		costs:     cd,
		costCmds:  costCmds,
		costsRaw:  rel(*costs),
	})
	if err := os.WriteFile(*svg, []byte(chart), 0o644); err != nil {
		log.Fatal(err)
	}
	if sc, ok := renderSchedChart(d); ok {
		if err := os.WriteFile(*schedSVG, []byte(sc), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	if err := os.WriteFile(*out, []byte(md), 0o644); err != nil {
		log.Fatal(err)
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// meta is what the report says about how the figures were made.
type meta struct {
	cmds                               []string
	rev, raw, svg, schedSVG, benchstat string
	hasStat                            bool
	costs                              *data // section 6, or nil
	costCmds                           []string
	costsRaw                           string
}

// multi is a repeatable string flag.
type multi []string

func (m *multi) String() string     { return strings.Join(*m, "\n") }
func (m *multi) Set(s string) error { *m = append(*m, s); return nil }

func machine(d *data) string {
	var b strings.Builder
	cpu := d.hdr["cpu"]
	if cpu == "" {
		cpu = "unknown CPU"
	}
	fmt.Fprintf(&b, "%s/%s, %s, %d logical CPUs", d.hdr["goos"], d.hdr["goarch"], cpu, runtime.NumCPU())
	if mem := memTotal(); mem != "" {
		fmt.Fprintf(&b, ", %s RAM", mem)
	}
	return b.String()
}

// memTotal returns the machine's memory from /proc/meminfo, or "".
func memTotal() string {
	raw, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(rest), "%f", &kb)
			return fmt.Sprintf("%.0f GiB", kb/(1<<20))
		}
	}
	return ""
}

func today() string { return time.Now().UTC().Format("2006-01-02") }
