package governor

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"runtime"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/shirou/gopsutil/v4/cpu"
	"github.com/shirou/gopsutil/v4/mem"
)

// SystemSampler is the default Sampler. It reads the host's CPU times and
// virtual memory through gopsutil and, because those are the host's figures
// even inside a container, the limits and usage of the process's cgroup (v1 or
// v2, found through /proc/self/cgroup and /proc/self/mountinfo, including the
// limits of its ancestors). Each figure in the Reading comes from the tighter
// of the two. It also reports the Go heap and GOMEMLIMIT.
//
// CPUPercent is measured between two calls of Sample, so the first call
// reports 0. Sample reads five to ten small files, and allocates
// (BenchmarkSystemSampler_Sample); what sampling once a second costs the
// process is measured by TestSystemSamplerOverhead (README.md says how to
// run it).
//
// The zero value is ready to use. A SystemSampler is safe for concurrent use
// and must not be copied after first use.
type SystemSampler struct {
	// Root is the file system the cgroup files are read from: it holds
	// proc/self/cgroup, proc/self/mountinfo and the cgroup mounts. Defaults to
	// os.DirFS("/"). The cgroups are located on the first call of Sample.
	Root fs.FS

	mu       sync.Mutex
	located  bool
	cgroups  cgroups
	prev     sampleCounters
	runtimes [2]metrics.Sample
}

// sampleCounters are the cumulative counters a CPU percentage is computed from.
type sampleCounters struct {
	at             time.Time
	hostBusy, host float64 // host CPU seconds busy and in total, all CPUs
	cgUsage        time.Duration
	cgLevel        string
}

// errNoCPUTimes reports that gopsutil returned no CPU times.
var errNoCPUTimes = errors.New("governor: no host CPU times")

// Sample takes a reading. It returns an error if the host's figures cannot be
// read or a cgroup file is malformed; a process without cgroups gets host
// figures.
func (s *SystemSampler) Sample(ctx context.Context) (Reading, error) {
	if err := ctx.Err(); err != nil {
		return Reading{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.located {
		root := s.Root
		if root == nil {
			root = os.DirFS("/")
		}
		cg, err := findCgroups(root)
		if err != nil {
			return Reading{}, err
		}
		s.cgroups, s.located = cg, true
		s.runtimes[0].Name = "/memory/classes/heap/objects:bytes"
		s.runtimes[1].Name = "/gc/gomemlimit:bytes"
	}

	times, err := cpu.TimesWithContext(ctx, false)
	if err == nil && len(times) == 0 {
		err = errNoCPUTimes
	}
	if err != nil {
		return Reading{}, err
	}
	vm, err := mem.VirtualMemoryWithContext(ctx)
	if err != nil {
		return Reading{}, err
	}
	cg, err := s.cgroups.read()
	if err != nil {
		return Reading{}, err
	}
	metrics.Read(s.runtimes[:])

	t := times[0]
	now := sampleCounters{
		at:      time.Now(),
		host:    t.User + t.System + t.Idle + t.Nice + t.Iowait + t.Irq + t.Softirq + t.Steal,
		cgUsage: cg.cpuUsage,
		cgLevel: cg.cpuLevel,
	}
	now.hostBusy = now.host - t.Idle - t.Iowait
	prev := s.prev
	s.prev = now

	r := Reading{
		CPUCores:     float64(runtime.NumCPU()),
		CPUSource:    SourceHost,
		MemoryLimit:  vm.Total,
		MemorySource: SourceHost,
		GoHeap:       runtimeUint64(s.runtimes[0]),
		GoMemLimit:   runtimeUint64(s.runtimes[1]),
	}
	r.MemoryAvailable = min(vm.Available, vm.Total)
	r.MemoryUsed = vm.Total - r.MemoryAvailable
	if !prev.at.IsZero() {
		r.CPUPercent = percent(now.hostBusy-prev.hostBusy, now.host-prev.host)
	}

	if cg.cpuSource != SourceUnknown {
		var pct float64
		if !prev.at.IsZero() && prev.cgLevel == cg.cpuLevel {
			wall := now.at.Sub(prev.at).Seconds() * cg.cpuCores
			pct = percent((cg.cpuUsage - prev.cgUsage).Seconds(), wall)
		}
		if idle(pct, cg.cpuCores) <= idle(r.CPUPercent, r.CPUCores) {
			r.CPUPercent, r.CPUCores, r.CPUSource = pct, cg.cpuCores, cg.cpuSource
		}
	}
	if cg.memSource != SourceUnknown && cg.memLimit-cg.memUsed <= r.MemoryAvailable {
		r.MemoryLimit, r.MemoryUsed, r.MemorySource = cg.memLimit, cg.memUsed, cg.memSource
		r.MemoryAvailable = cg.memLimit - cg.memUsed
	}
	return r, nil
}

// percent returns part/whole as a percentage clamped to [0, 100].
func percent(part, whole float64) float64 {
	if whole <= 0 || part <= 0 {
		return 0
	}
	return min(100, part/whole*100)
}

// idle returns the idle cores of a capacity of cores that is pct busy.
func idle(pct, cores float64) float64 { return (1 - pct/100) * cores }

func runtimeUint64(s metrics.Sample) uint64 {
	if s.Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s.Value.Uint64()
}
