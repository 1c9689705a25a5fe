package governor

import "context"

// Source says where a limit in a Reading came from.
type Source uint8

const (
	// SourceUnknown is the zero Source: the sampler did not say.
	SourceUnknown Source = iota
	// SourceHost means the figure is the machine's (or virtual machine's) own.
	SourceHost
	// SourceCgroupV1 means the figure came from a cgroup v1 controller of this process.
	SourceCgroupV1
	// SourceCgroupV2 means the figure came from this process's cgroup v2 (unified) hierarchy.
	SourceCgroupV2
)

// String returns "host", "cgroup v1", "cgroup v2" or "unknown".
func (s Source) String() string {
	switch s {
	case SourceHost:
		return "host"
	case SourceCgroupV1:
		return "cgroup v1"
	case SourceCgroupV2:
		return "cgroup v2"
	default:
		return "unknown"
	}
}

// Reading is one sample of the resources available to this process.
//
// CPU figures describe the tighter of the host and the process's cgroup: the
// one with fewer idle cores. Memory figures likewise come from one source, the
// one with less memory available, so that MemoryUsed + MemoryAvailable =
// MemoryLimit for readings of the SystemSampler.
type Reading struct {
	// CPUPercent is the busy share of CPUCores since the previous sample, 0 to
	// 100. A reading with a CPUPercent outside [0, 100], NaN or infinite, is
	// rejected: the sample counts as failed (ErrInvalidReading).
	CPUPercent float64
	// CPUCores is the CPU capacity CPUPercent refers to: the CPUs this process
	// may run on (its affinity, which a cpuset or taskset narrows; the busy
	// share is then of those CPUs, not of the host's), or its cgroup quota in
	// cores. Zero means unknown. A negative, NaN or infinite CPUCores is
	// rejected as CPUPercent is.
	CPUCores float64
	// CPUSource says where CPUCores came from.
	CPUSource Source

	// MemoryUsed is the memory in use, in bytes. For a cgroup it is the
	// working set (usage less inactive page cache), as the kubelet counts it.
	MemoryUsed uint64
	// MemoryAvailable is the memory that can still be used, in bytes.
	MemoryAvailable uint64
	// MemoryLimit is the memory limit, in bytes. Zero means the reading has no
	// memory figures, and the memory limits of the Governor are not applied.
	MemoryLimit uint64
	// MemorySource says where MemoryLimit came from.
	MemorySource Source

	// GoHeap is the Go heap occupied by objects, live or not yet swept, in
	// bytes (runtime/metrics /memory/classes/heap/objects:bytes).
	GoHeap uint64
	// GoMemLimit is the Go runtime's soft memory limit, GOMEMLIMIT, in bytes
	// (math.MaxInt64 when none is set).
	GoMemLimit uint64
}

// MemoryPercent returns MemoryUsed as a percentage of MemoryLimit, or 0 when
// the reading has no memory figures.
func (r Reading) MemoryPercent() float64 {
	if r.MemoryLimit == 0 {
		return 0
	}
	return float64(r.MemoryUsed) / float64(r.MemoryLimit) * 100
}

// Sampler takes readings of the resources available to this process. The
// Governor calls Sample once per sampling interval, never two calls at once,
// each call on a goroutine of its own; the context is cancelled by Stop.
//
// A call that panics or calls runtime.Goexit is a failed sample (PanicError,
// ErrSamplerGoexit): the Governor recovers, logs a panic with its stack and
// goes on sampling. A call that hangs is not called again until it returns;
// meanwhile the reading goes stale two intervals after the last sample
// returned (ErrSamplerLate). Stop waits for a call under way, so Sample must
// not wait for Stop.
type Sampler interface {
	// Sample returns a new reading. On error, or if the reading is invalid
	// (see Reading.CPUPercent and Config.MinAvailableMemory), the Governor
	// keeps its last good reading and marks it stale.
	Sample(ctx context.Context) (Reading, error)
}

// SamplerFunc adapts a function to the Sampler interface.
type SamplerFunc func(ctx context.Context) (Reading, error)

// Sample returns f(ctx).
func (f SamplerFunc) Sample(ctx context.Context) (Reading, error) { return f(ctx) }
