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
//     allocation, no system call. Acquire blocks until
//     the limits and a slot allow, first come first served, and is woken by a
//     sample that shows headroom or by a released Permit. Cancelling its
//     context returns the context's error and holds nothing.
//   - Admission has hysteresis: once a reading crosses a limit, work is
//     admitted again only when it falls back below a lower watermark
//     (Config.Hysteresis), so admission does not flap around the limit.
//   - A Weight can ask for more than one slot and reserve expected memory and
//     CPU, so that a burst of admissions between two samples cannot overshoot.
//   - Usage by key: Permit.Release charges slots × time held to the Permit's
//     key, and Usage returns a key's slot-time over a sliding window, so a
//     scheduler can serve the queue that has used the least.
//   - When the sampler fails, the Governor keeps the last good reading, marks
//     it stale and follows Config.StalePolicy: admit on slots alone (the
//     default) or refuse until a sample succeeds.
//
// # Lifetime
//
// New starts nothing. Start starts the one sampling goroutine and waits for
// its first sample; Stop stops it and waits for it. After Stop nothing is admitted.
// Before Start the Governor has no reading: it is stale.
//
// # Cost
//
// Measured on a 2-core machine (README.md has the figures and how to repeat
// them): a refused TryAcquire takes about 3ns in parallel; a granted one with
// its Release about 30ns, without allocating. The SystemSampler costs about
// 0.06% of one core at the default interval of one second.
package governor
