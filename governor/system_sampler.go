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
// The host's CPU figure is over the CPUs the process may run on, its
// affinity: the Cpus_allowed_list of /proc/self/status, which taskset and a
// cpuset (docker --cpuset-cpus) narrow. When those are fewer than the online
// CPUs (/sys/devices/system/cpu/online), CPUPercent is summed from the
// per-CPU times of the allowed CPUs only, and CPUCores counts them; otherwise,
// and where there is no such file (not Linux), it is the host-wide total. An
// affinity that changes between two samples gives no CPU figure (0) for the
// second, as the first sample does. A malformed CPU list is a sampler error.
//
// CPUPercent is measured between two calls of Sample, so the first call
// reports 0. Sample reads seven to twelve small files, and allocates
// (BenchmarkSystemSampler_Sample); what sampling once a second costs the
// process is measured by TestSystemSamplerOverhead (README.md says how to
// run it).
//
// The zero value is ready to use. A SystemSampler is safe for concurrent use
// and must not be copied after first use.
type SystemSampler struct {
	// Root is the file system the cgroup and affinity files are read from: it
	// holds proc/self/cgroup, proc/self/mountinfo, the cgroup mounts,
	// proc/self/status and sys/devices/system/cpu/online. Defaults to
	// os.DirFS("/"). The cgroups are located on the first call of Sample; the
	// affinity is read on every call. (The CPU times and memory figures come
	// from gopsutil, which reads the real /proc.)
	Root fs.FS

	// cpuTimes is cpu.TimesWithContext unless a test sets it.
	cpuTimes func(ctx context.Context, percpu bool) ([]cpu.TimesStat, error)

	mu       sync.Mutex
	located  bool
	cgroups  cgroups
	prev     sampleCounters
	runtimes [2]metrics.Sample
}

// sampleCounters are the cumulative counters a CPU percentage is computed from.
type sampleCounters struct {
	at             time.Time
	hostBusy, host float64 // host CPU seconds busy and in total, over the CPUs hostSet names
	hostSet        uint64  // 0 for all CPUs, or which CPUs were summed (sumAllowed)
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

	hostBusy, host, hostCores, hostSet, err := s.hostCPU(ctx)
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

	now := sampleCounters{
		at:       time.Now(),
		hostBusy: hostBusy,
		host:     host,
		hostSet:  hostSet,
		cgUsage:  cg.cpuUsage,
		cgLevel:  cg.cpuLevel,
	}
	prev := s.prev
	s.prev = now

	r := Reading{
		CPUCores:     hostCores,
		CPUSource:    SourceHost,
		MemoryLimit:  vm.Total,
		MemorySource: SourceHost,
		GoHeap:       runtimeUint64(s.runtimes[0]),
		GoMemLimit:   runtimeUint64(s.runtimes[1]),
	}
	r.MemoryAvailable = min(vm.Available, vm.Total)
	r.MemoryUsed = vm.Total - r.MemoryAvailable
	if !prev.at.IsZero() && prev.hostSet == now.hostSet {
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

// hostCPU returns the host's CPU seconds busy and in total, summed over the
// CPUs this process may run on; how many CPUs those are; and which (0 for all
// of them). Only when the process may not run on every online CPU does it
// read the per-CPU times; if none of its CPUs is among them (a /proc/stat
// that numbers the CPUs of a container from 0, as LXCFS does), the total is
// taken after all.
func (s *SystemSampler) hostCPU(ctx context.Context) (busy, total, cores float64, set uint64, err error) {
	times := s.cpuTimes
	if times == nil {
		times = cpu.TimesWithContext
	}
	allowed, online, restricted, ok, err := readAffinity(s.cgroups.fsys)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	if restricted {
		perCPU, err := times(ctx, true)
		if err != nil {
			return 0, 0, 0, 0, err
		}
		if busy, total, n, set := sumAllowed(perCPU, allowed); n > 0 {
			return busy, total, float64(n), set, nil
		}
	}
	all, err := times(ctx, false)
	if err == nil && len(all) == 0 {
		err = errNoCPUTimes
	}
	if err != nil {
		return 0, 0, 0, 0, err
	}
	cores = float64(runtime.NumCPU())
	if ok && !restricted {
		cores = float64(online.count()) // the CPUs the total covers
	}
	busy, total = cpuSeconds(all[0])
	return busy, total, cores, 0, nil
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
