package governor_test

import (
	"os"
	"testing"
	"testing/fstest"

	"github.com/jobkit/jobkit/governor"
)

// TestSystemSamplerReal samples this machine, which may or may not run the
// test in a container, under cgroup v1, v2 or neither: it checks ranges only.
func TestSystemSamplerReal(t *testing.T) {
	t.Parallel()
	var s governor.SystemSampler
	for i := range 3 {
		r, err := s.Sample(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("sample %d: %+v", i, r)
		switch {
		case r.CPUPercent < 0 || r.CPUPercent > 100:
			t.Errorf("CPUPercent = %v, want 0..100", r.CPUPercent)
		case i == 0 && r.CPUPercent != 0:
			t.Errorf("first CPUPercent = %v, want 0", r.CPUPercent)
		case !(r.CPUCores > 0 && r.CPUCores <= 1<<16):
			t.Errorf("CPUCores = %v", r.CPUCores)
		case r.MemoryLimit < 16<<20:
			t.Errorf("MemoryLimit = %d, want at least 16MiB", r.MemoryLimit)
		case r.MemoryUsed+r.MemoryAvailable != r.MemoryLimit:
			t.Errorf("used %d + available %d != limit %d", r.MemoryUsed, r.MemoryAvailable, r.MemoryLimit)
		case r.MemoryUsed == 0:
			t.Error("MemoryUsed = 0")
		case r.GoHeap == 0 || r.GoHeap > r.MemoryLimit:
			t.Errorf("GoHeap = %d", r.GoHeap)
		case r.GoMemLimit == 0:
			t.Error("GoMemLimit = 0")
		}
		for _, src := range []governor.Source{r.CPUSource, r.MemorySource} {
			if src != governor.SourceHost && src != governor.SourceCgroupV1 && src != governor.SourceCgroupV2 {
				t.Errorf("source = %v", src)
			}
		}
	}
}

// TestSystemSamplerCgroup drives the sampler's cgroup side with fixture trees;
// the host side is this machine's.
func TestSystemSamplerCgroup(t *testing.T) {
	t.Parallel()
	s := governor.SystemSampler{Root: os.DirFS("testdata/cgroup/v2-container")}
	r, err := s.Sample(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := governor.Reading{
		CPUCores: 0.5, CPUSource: governor.SourceCgroupV2,
		MemoryUsed: 16 << 20, MemoryAvailable: 48 << 20, MemoryLimit: 64 << 20, MemorySource: governor.SourceCgroupV2,
		GoHeap: r.GoHeap, GoMemLimit: r.GoMemLimit,
	}
	if r != want {
		t.Errorf("Sample with a 64MiB, half-core cgroup =\n %+v, want\n %+v", r, want)
	}

	s = governor.SystemSampler{Root: os.DirFS("testdata/cgroup/v1-hybrid-unlimited")}
	r, err = s.Sample(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if r.CPUSource != governor.SourceHost || r.MemorySource != governor.SourceHost {
		t.Errorf("Sample with unlimited cgroups: sources %v, %v; want host", r.CPUSource, r.MemorySource)
	}

	s = governor.SystemSampler{Root: fstest.MapFS{
		"proc/self/cgroup":                 {Data: []byte("0::/\n")},
		"proc/self/mountinfo":              {Data: []byte("1 0 0:1 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n")},
		"sys/fs/cgroup/memory.max":         {Data: []byte("-1\n")},
		"sys/fs/cgroup/memory.current":     {Data: []byte("1\n")},
		"sys/fs/cgroup/cgroup.controllers": {Data: []byte("memory\n")},
	}}
	if r, err := s.Sample(t.Context()); err == nil {
		t.Errorf("Sample with a malformed memory.max = %+v, want an error", r)
	}
}
