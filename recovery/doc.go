// Package recovery rescues stuck work: runs whose handler neither returns
// nor beats, in the queues of a sched.Scheduler.
//
// Every run holds a lease, from the moment a scheduling loop claims its
// entry (see sched.QueueConfig.Lease). The handler renews it with
// Job.Heartbeat, or the queue renews it while the handler has not returned
// (AutoRenew: then only a process that stops beating loses its runs, and a
// handler that deadlocks is never rescued — choose per queue). A Reaper
// looks once an Interval and rescues every run whose lease ended more than
// Grace ago, so a run is rescued no sooner than lease + Grace after its
// last heartbeat and no later than one Interval after that:
//
//   - the old run's context is cancelled with cause sched.ErrRescued, and
//     the entry runs again at once, without spending an attempt; it stays
//     live throughout, so an add of its key is still refused;
//   - every run has a larger generation than the last (its fencing token):
//     a late success or failure of the old run, a heartbeat or progress
//     report from it, is ignored (sched.ErrStale); the rerun's result
//     counts;
//   - Go cannot stop a goroutine: a hung handler keeps its goroutine, but
//     the scheduler starts a worker in its place at the rescue, so capacity
//     does not dip, and the old goroutine does not rejoin the pool when it
//     returns (Stats.Abandoned counts those still alive);
//   - the rescue after MaxRescues poisons the entry instead (its own final
//     state, with the reason in its errors).
//
// The Reaper also raises alerts — a log warning, a metric and a hook — when
// a look finds an entry running that has been taken more than
// TakenThreshold times (retries and reruns count; runs that fall between
// looks are not seen), and when many entries of a queue wait while none of
// its runs ends.
//
// A panic in a handler is never a rescue: the scheduler settles the run at
// once as a failure carrying its stack.
package recovery
