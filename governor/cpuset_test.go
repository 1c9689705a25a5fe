package governor

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/shirou/gopsutil/v4/cpu"
)

func TestParseCPUList(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in    string
		want  cpuList
		count uint64
	}{
		{"0", cpuList{{0, 0}}, 1},
		{"0-3,8,10-11", cpuList{{0, 3}, {8, 8}, {10, 11}}, 7},
		{"\t0-3,8,10-11\n", cpuList{{0, 3}, {8, 8}, {10, 11}}, 7},
		{" 0 - 1 , 5 ", cpuList{{0, 1}, {5, 5}}, 3},
		{"5,1,3", cpuList{{1, 1}, {3, 3}, {5, 5}}, 3},
		{"0-3,2-5,6,8", cpuList{{0, 6}, {8, 8}}, 8}, // overlapping and adjacent ranges merge
		{"7,7", cpuList{{7, 7}}, 1},
		{"0-4294967295", cpuList{{0, math.MaxUint32}}, 1 << 32},
		{"4294967295", cpuList{{math.MaxUint32, math.MaxUint32}}, 1},
		{"4294967294-4294967295,0", cpuList{{0, 0}, {math.MaxUint32 - 1, math.MaxUint32}}, 3},
	}
	for _, tt := range tests {
		got, err := parseCPUList(tt.in)
		if err != nil || !slices.Equal(got, tt.want) || got.count() != tt.count {
			t.Errorf("parseCPUList(%q) = %v (count %d), %v; want %v (count %d)", tt.in, got, got.count(), err, tt.want, tt.count)
		}
	}
	for _, in := range []string{
		"", " \n", "a", "0-", "-1", "3-1", ",", "1,,2", "1-2-3", "0x1", "+1", "1.5",
		"4294967296", "0-4294967296", "0-99999999999999999999999", "0-3:2/4", "0 1",
	} {
		if got, err := parseCPUList(in); err == nil {
			t.Errorf("parseCPUList(%q) = %v, want an error", in, got)
		}
	}
}

// TestParseCPUListAllocation checks that a list naming billions of CPUs
// takes memory in proportion to its text.
func TestParseCPUListAllocation(t *testing.T) {
	var l cpuList
	allocs := testing.AllocsPerRun(10, func() { l, _ = parseCPUList("0-4294967295") })
	if allocs > 1 || cap(l) > 1 {
		t.Errorf("parseCPUList(\"0-4294967295\"): %v allocations, capacity %d; want 1, 1", allocs, cap(l))
	}
}

func TestCPUListCovers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		l, m string
		want bool
	}{
		{"0-63", "0-63", true},
		{"0-127", "0-3", true}, // allowed names possible CPUs that are not online
		{"0-1", "0-63", false},
		{"0-31,32-63", "0-63", true},
		{"0-31,33-63", "0-63", false},
		{"0,2", "0-2", false},
		{"0-3,8", "8,1-2", true},
		{"0-3", "4", false},
		{"0-4294967295", "4294967295", true},
	}
	for _, tt := range tests {
		l, err1 := parseCPUList(tt.l)
		m, err2 := parseCPUList(tt.m)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if got := l.covers(m); got != tt.want {
			t.Errorf("%q covers %q = %v, want %v", tt.l, tt.m, got, tt.want)
		}
	}
}

// perCPU returns n CPUs' times, named cpu0…: each busy CPU with busy seconds
// of user time, each other CPU with as many seconds idle.
func perCPU(n int, busy func(i int) bool, seconds float64) []cpu.TimesStat {
	times := make([]cpu.TimesStat, n)
	for i := range times {
		times[i].CPU = fmt.Sprintf("cpu%d", i)
		if busy(i) {
			times[i].User = seconds
		} else {
			times[i].Idle = seconds
		}
	}
	return times
}

func TestSumAllowed(t *testing.T) {
	t.Parallel()
	times := []cpu.TimesStat{
		{CPU: "cpu0", User: 1, Idle: 9},
		{CPU: "cpu1", System: 2, Nice: 1, Iowait: 3, Idle: 4},
		{CPU: "cpu2", Irq: 1, Softirq: 1, Steal: 1, Idle: 7},
		{CPU: "cpu3", Idle: 10},
		{CPU: "cpu-total", User: 100},
		{CPU: "cpu", User: 100},
		{CPU: "cpux", User: 100},
		{CPU: "cpu+1", User: 100},
		{CPU: "cpu4294967296", User: 100},
	}
	tests := []struct {
		allowed            string
		busy, total, cores float64
	}{
		{"0", 1, 10, 1},
		{"1", 3, 10, 1},
		{"0-1", 4, 20, 2},
		{"1-2", 6, 20, 2},
		{"0-3", 7, 40, 4},
		{"0-4294967295", 7, 40, 4},
		{"3,7-9", 0, 10, 1},
		{"7-9", 0, 0, 0},
	}
	for _, tt := range tests {
		allowed, err := parseCPUList(tt.allowed)
		if err != nil {
			t.Fatal(err)
		}
		busy, total, cores, _ := sumAllowed(times, allowed)
		if busy != tt.busy || total != tt.total || float64(cores) != tt.cores {
			t.Errorf("sumAllowed over %q = busy %v, total %v, cores %d; want %v, %v, %v", tt.allowed, busy, total, cores, tt.busy, tt.total, tt.cores)
		}
	}

	set := func(allowed string, times []cpu.TimesStat) uint64 {
		l, _ := parseCPUList(allowed)
		_, _, _, s := sumAllowed(times, l)
		return s
	}
	if set("0-1", times) != set("0-1", times[:2]) || set("0-1", times) != set("0-1,7", times) {
		t.Error("sums over the same CPUs have different sets")
	}
	if set("0-1", times) == set("1-2", times) || set("0-2", times) == set("0-2", times[1:]) {
		t.Error("sums over different CPUs have the same set")
	}
}

func TestReadAffinity(t *testing.T) {
	t.Parallel()
	status := func(list string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte("Name:\tapp\nCpus_allowed:\tff\n" + list + "Mems_allowed_list:\t0\n")}
	}
	online := &fstest.MapFile{Data: []byte("0-7\n")}
	tests := []struct {
		name           string
		fsys           fstest.MapFS
		restricted, ok bool
		err            bool
	}{
		{"no status", fstest.MapFS{}, false, false, false},
		{"no line", fstest.MapFS{"proc/self/status": status("")}, false, false, false},
		{"all online", fstest.MapFS{"proc/self/status": status("Cpus_allowed_list:\t0-7\n"), "sys/devices/system/cpu/online": online}, false, true, false},
		{"possible", fstest.MapFS{"proc/self/status": status("Cpus_allowed_list:\t0-63\n"), "sys/devices/system/cpu/online": online}, false, true, false},
		{"pinned", fstest.MapFS{"proc/self/status": status("Cpus_allowed_list:\t0-1\n"), "sys/devices/system/cpu/online": online}, true, true, false},
		{"no online", fstest.MapFS{"proc/self/status": status("Cpus_allowed_list:\t0-7\n")}, true, true, false},
		{"garbage", fstest.MapFS{"proc/self/status": status("Cpus_allowed_list:\tx\n")}, false, false, true},
		{"empty", fstest.MapFS{"proc/self/status": status("Cpus_allowed_list:\n")}, false, false, true},
		{"last line", fstest.MapFS{"proc/self/status": &fstest.MapFile{Data: []byte("Cpus_allowed_list:\t0-1")}, "sys/devices/system/cpu/online": online}, true, true, false},
		{"bad online", fstest.MapFS{"proc/self/status": status("Cpus_allowed_list:\t0-7\n"), "sys/devices/system/cpu/online": &fstest.MapFile{Data: []byte("7-0\n")}}, false, false, true},
	}
	for _, tt := range tests {
		_, _, restricted, ok, err := readAffinity(tt.fsys)
		if restricted != tt.restricted || ok != tt.ok || (err != nil) != tt.err {
			t.Errorf("%s: readAffinity = restricted %v, ok %v, %v; want %v, %v, error %v", tt.name, restricted, ok, err, tt.restricted, tt.ok, tt.err)
		}
	}
}

// fakeCPUTimes is a source of host CPU times for SystemSampler.cpuTimes:
// per-CPU times, and their sum as the total.
type fakeCPUTimes struct {
	perCPU      []cpu.TimesStat
	perCPUCalls int
}

func (f *fakeCPUTimes) times(_ context.Context, percpu bool) ([]cpu.TimesStat, error) {
	if percpu {
		f.perCPUCalls++
		return slices.Clone(f.perCPU), nil
	}
	total := cpu.TimesStat{CPU: "cpu-total"}
	for _, t := range f.perCPU {
		total.User += t.User
		total.Idle += t.Idle
	}
	return []cpu.TimesStat{total}, nil
}

// TestSystemSamplerPinned samples a process pinned to 2 CPUs of 64 (taskset,
// docker --cpuset-cpus without a quota) while both are saturated and the
// others idle: its CPUs are 100% busy, not the host's 3%.
func TestSystemSamplerPinned(t *testing.T) {
	t.Parallel()
	pinned := func(i int) bool { return i < 2 }
	f := &fakeCPUTimes{perCPU: perCPU(64, pinned, 100)}
	s := SystemSampler{
		Root: fstest.MapFS{
			"proc/self/status":              {Data: []byte("Name:\tapp\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\n")},
			"sys/devices/system/cpu/online": {Data: []byte("0-63\n")},
		},
		cpuTimes: f.times,
	}
	if _, err := s.Sample(t.Context()); err != nil {
		t.Fatal(err)
	}
	f.perCPU = perCPU(64, pinned, 200)
	r, err := s.Sample(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if r.CPUPercent < 99.9 || r.CPUCores != 2 || r.CPUSource != SourceHost {
		t.Errorf("pinned to 2 saturated CPUs of 64: CPUPercent %.3g of %v cores (%v), want 100 of 2 (host)", r.CPUPercent, r.CPUCores, r.CPUSource)
	}

	// The affinity widens to every CPU: the sample after the change has no
	// CPU figure (its counters cover other CPUs), the next one the host's.
	s.Root = fstest.MapFS{
		"proc/self/status":              {Data: []byte("Cpus_allowed_list:\t0-63\n")},
		"sys/devices/system/cpu/online": {Data: []byte("0-63\n")},
	}
	s.cgroups.fsys = s.Root
	calls := f.perCPUCalls
	f.perCPU = perCPU(64, pinned, 300)
	if r, err = s.Sample(t.Context()); err != nil || r.CPUPercent != 0 || r.CPUCores != 64 {
		t.Errorf("sample after the affinity widened = %+v, %v; want 0%% of 64 cores", r, err)
	}
	f.perCPU = perCPU(64, pinned, 400)
	if r, err = s.Sample(t.Context()); err != nil || math.Abs(r.CPUPercent-100*2.0/64) > 0.01 || r.CPUCores != 64 {
		t.Errorf("unpinned sample = %+v, %v; want %v%% of 64 cores", r, err, 100*2.0/64)
	}
	if f.perCPUCalls != calls {
		t.Errorf("unpinned samples read the per-CPU times %d times, want 0", f.perCPUCalls-calls)
	}
}

// TestSystemSamplerAffinityMalformed: a Cpus_allowed_list the sampler cannot
// parse is a sampler error, as a malformed cgroup file is.
func TestSystemSamplerAffinityMalformed(t *testing.T) {
	t.Parallel()
	f := &fakeCPUTimes{perCPU: perCPU(4, func(int) bool { return false }, 1)}
	s := SystemSampler{
		Root:     fstest.MapFS{"proc/self/status": {Data: []byte("Cpus_allowed_list:\t0-1,zz\n")}},
		cpuTimes: f.times,
	}
	if r, err := s.Sample(t.Context()); err == nil {
		t.Errorf("Sample with a malformed Cpus_allowed_list = %+v, want an error", r)
	}
}
