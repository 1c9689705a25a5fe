// Package governor admits work only while the process has CPU, memory and a
// processing slot to spare.
//
// A Governor samples the resources available to the process in the
// background, once per Config.Interval, and hands out Permits against the
// latest sample:
//
//   - Readings are cgroup-aware. The default SystemSampler reads the host's
//     CPU and memory through gopsutil and the process's cgroup (v1 or v2,
//     including the limits of parent cgroups), because inside a container the
//     host's figures are not the process's. Each figure comes from the tighter
//     of the two, and a Snapshot says which: host, cgroup v1 or cgroup v2.
//   - TryAcquire decides from atomics set when a sample arrives: no lock, no
//     allocation, no system call. Acquire blocks until the limits and a slot
//     allow, first come first served, and is woken by a sample that shows
//     headroom or by a released Permit. Cancelling its context returns the
//     context's error and holds nothing. A waiter short of memory or CPU room
//     holds up later work for at most Config.MaxHold at a time, and is passed
//     over for at most as long, so that no waiter stalls the Governor.
//   - A Weight that could never fit the limits (more CPU than MaxCPUPercent,
//     more memory than the limits leave of the memory limit) is refused with
//     ErrInvalidWeight rather than waited for.
//   - Admission has hysteresis: once a reading crosses a limit, work is
//     admitted again only when it falls back below a lower watermark
//     (Config.Hysteresis), so admission does not flap around the limit.
//   - A Weight can ask for more than one slot and reserve expected memory and
//     CPU, so that a burst of admissions between two samples cannot overshoot.
//   - Changed returns a channel closed at the next sample, release or Stop, so
//     that a scheduler whose TryAcquire was refused can wait instead of
//     polling.
//   - Usage by key: Permit.Release charges slots × time held to the Permit's
//     key, and Usage returns a key's slot-time over a sliding window, so a
//     scheduler can serve the queue that has used the least.
//   - When a sample fails (the Sampler returns an error or an invalid
//     reading, panics, or has not returned for two intervals), the Governor
//     keeps the last good reading, marks it stale and follows
//     Config.StalePolicy: admit on slots alone (the default) or refuse until a
//     sample succeeds. A panic is recovered and logged with its stack
//     (Config.Logger); sampling goes on. So it does when Config.NowFunc
//     panics or calls runtime.Goexit on the sampling goroutine (a new one
//     takes its place), or a Logger's handler does.
//
// # Lifetime
//
// New starts nothing. Start starts the sampling goroutine, which runs each
// call of the Sampler, and of the Logger, on a short-lived goroutine of its
// own, and waits for the first sample; Stop stops sampling and waits for
// all of them. After Stop nothing
// is admitted.
// Before Start the Governor has no reading: it is stale.
//
// # Cost
//
// A refused TryAcquire is one atomic load; a granted one of the zero Weight
// without a key, with its Release, is one compare-and-swap each on the
// record its goroutine maps to, with no lock, clock or allocation, and
// writes nothing shared with other goroutines (see TryAcquire). The
// SystemSampler reads five to ten small files per sample, once a
// Config.Interval (a second by default), on a goroutine of its own.
// Figures, against golang.org/x/sync/semaphore, a channel and a mutex in
// the same run: bench/RESULTS.md in the repository, section 6.4; the
// sampler's overhead: TestSystemSamplerOverhead (README.md says how to run
// it).
package governor
