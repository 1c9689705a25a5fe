package main

import (
	"fmt"
	"strings"
	"testing"
)

// grid writes go test output for scenario 1: two key kinds, both paths,
// jobkit under both and the peers under path=work only, as BenchmarkMPMC
// runs them. jobkit's ns/op is base × factor; client-go's is base.
func grid(factor map[string]float64) string {
	var b strings.Builder
	b.WriteString("goos: linux\ngoarch: amd64\ncpu: test\n")
	for _, kind := range []string{"ordered", "string"} {
		for _, path := range []string{"work", "scope"} {
			for _, row := range []string{"backlog=small/p=4/c=4/batch=1", "backlog=small/p=4/c=4/batch=16"} {
				pre := fmt.Sprintf("BenchmarkMPMC/keys=%s/path=%s/%s/impl=", kind, path, row)
				fmt.Fprintf(&b, "%sjobkit-2 1000 %g ns/op 0.5 allocs/batch 0.01 allocs/item\n", pre, 100*factor[kind+"/"+path])
				if path == "work" {
					fmt.Fprintf(&b, "%sclientgo-2 1000 100 ns/op 0 allocs/batch\n", pre)
					fmt.Fprintf(&b, "%schan-2 1000 40 ns/op 0 allocs/batch\n", pre)
				}
			}
		}
	}
	return b.String()
}

func TestReportRanksKindsAndReusesPeers(t *testing.T) {
	t.Parallel()
	d, err := parse(strings.NewReader(grid(map[string]float64{
		"ordered/work": 0.3, "ordered/scope": 0.5, "string/work": 0.9, "string/scope": 0.7,
	})))
	if err != nil {
		t.Fatal(err)
	}
	md, svg := renderReport(d, meta{svg: "chart.svg"})

	// The headline leads with the least favourable kind and path and ends
	// with the best.
	head := md[strings.Index(md, "## Headline"):strings.Index(md, "## Targets")]
	order := []string{"| string | work |", "| string | scope |", "| ordered | scope |", "| ordered | work |"}
	last := -1
	for _, row := range order {
		i := strings.Index(head, row)
		if i < 0 || i < last {
			t.Fatalf("headline rows out of order, want %q:\n%s", order, head)
		}
		last = i
	}
	if !strings.Contains(head, "Least favourable: **keys=string, path=work**") || !strings.Contains(head, "Best: **keys=ordered, path=work**") {
		t.Errorf("headline text:\n%s", head)
	}
	if !strings.Contains(svg, "keys=string, path=work: the least favourable") {
		t.Error("the chart does not show the least favourable kind and path")
	}

	// path=scope tables take the peers' path=work figures.
	scope := md[strings.Index(md, "### keys=ordered, path=scope"):]
	scope = scope[:strings.Index(scope, "\n### ")]
	if !strings.Contains(scope, "| small 4 4 1 | 50.0 | 100 | 40.0 | 0.50 | 1.25 |") {
		t.Errorf("path=scope row without the peers' path=work figures:\n%s", scope)
	}

	// Targets: path=work limits 0.6 and 0.35, path=scope 0.8 and 0.4;
	// ÷ chan ≤ 3 at (4,4) batch 1.
	for _, want := range []string{
		"| ordered | work | 5 of 5 met |",
		"| ordered | scope | 4 of 5 met, **1 missed** | ÷ client-go 0.500 (backlog=small p=4 c=4 batch=16) |",
		"| string | work | 3 of 5 met, **2 missed** |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("missing %q in\n%s", want, md[strings.Index(md, "## Targets"):strings.Index(md, "## 1.")])
		}
	}
}

func TestKeysOfDefaultsOldMPMCNames(t *testing.T) {
	t.Parallel()
	k := keysOf("MPMC/impl=jobkit/p=4/c=4/batch=1")
	if k["keys"] != "ordered" || k["path"] != "work" || k["backlog"] != "small" || k["impl"] != "jobkit" {
		t.Errorf("keys = %v", k)
	}
	if k := keysOf("MPMC/keys=string/path=scope/backlog=1M/impl=jobkit"); k["keys"] != "string" || k["path"] != "scope" || k["backlog"] != "1M" {
		t.Errorf("keys = %v", k)
	}
	if got := with("MPMC/keys=string/path=scope/impl=jobkit", "path", "work"); got != "MPMC/keys=string/path=work/impl=jobkit" {
		t.Errorf("with = %q", got)
	}
}
