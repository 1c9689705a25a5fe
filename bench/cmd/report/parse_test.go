package main

import (
	"strings"
	"testing"
)

const sample = `goos: linux
goarch: amd64
pkg: github.com/jobkit/jobkit/bench
cpu: AMD EPYC
BenchmarkMPMC/impl=jobkit/p=4/c=4/batch=1-2         	 1000	 500.0 ns/op	 0.002 allocs/item	 30 B/op	 0 allocs/op
BenchmarkMPMC/impl=jobkit/p=4/c=4/batch=1-2         	 1000	 300.0 ns/op	 0.004 allocs/item	 30 B/op	 0 allocs/op
BenchmarkMPMC/impl=jobkit/p=4/c=4/batch=1-2         	 1000	 400.0 ns/op	 0.003 allocs/item	 30 B/op	 0 allocs/op
BenchmarkMPMC/impl=clientgo/p=4/c=4/batch=1-2       	 1000	 400.0 ns/op	 0 allocs/item	 40 B/op	 0 allocs/op
some noise
PASS
`

func TestParse(t *testing.T) {
	d, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	rs, hdr := d.results, d.hdr
	if len(d.order) != 2 {
		t.Errorf("order = %v", d.order)
	}
	if hdr["cpu"] != "AMD EPYC" {
		t.Errorf("cpu = %q", hdr["cpu"])
	}
	r := rs["MPMC/impl=jobkit/p=4/c=4/batch=1"]
	if r == nil {
		t.Fatalf("missing result; have %v", rs)
	}
	if m, _ := r.median("ns/op"); m != 400 {
		t.Errorf("median ns/op = %v, want 400", m)
	}
	if r.keys["scenario"] != "MPMC" || r.keys["c"] != "4" || r.keys["impl"] != "jobkit" {
		t.Errorf("keys = %v", r.keys)
	}
	peer := rs[withImpl(r.name, "clientgo")]
	if m, _ := peer.median("ns/op"); m != 400 {
		t.Errorf("peer median = %v", m)
	}
	if _, ok := (*result)(nil).median("ns/op"); ok {
		t.Error("median of a missing result reported ok")
	}
}
