// Command report turns the output of the bench module's benchmarks (go test
// -bench, several runs each) into RESULTS.md: medians per scenario, impl and
// parameters, ratios of jobkit to each peer, every target of the
// side-by-side issue marked met or missed, and an SVG chart of time per item
// against consumer count. bench/run.sh calls it.
//
// Usage:
//
//	go run ./cmd/report -in results/bench.txt -out RESULTS.md -svg results/chart.svg
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
	bstat := flag.String("benchstat", "results/benchstat.txt", "benchstat output to link (may be missing)")
	var cmds multi
	flag.Var(&cmds, "cmd", "a command that produced -in, quoted in the report (repeatable)")
	rev := flag.String("rev", "", "the revision of the library measured, quoted in the report")
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
	chart := renderChart(d)
	if err := os.WriteFile(*svg, []byte(chart), 0o644); err != nil {
		log.Fatal(err)
	}
	md := renderReport(d, meta{
		cmds:      cmds,
		rev:       *rev,
		raw:       rel(*in),
		svg:       rel(*svg),
		benchstat: rel(*bstat),
		hasStat:   exists(*bstat),
	})
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
	cmds                     []string
	rev, raw, svg, benchstat string
	hasStat                  bool
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
