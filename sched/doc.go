// Package sched runs background jobs in the process: named, typed queues of
// deduplicated entries, a few scheduling loops that share the workers
// fairly among the queues and ask a governor before they dispatch, and many
// workers that run the handlers.
//
// # Queues and entries
//
// A queue is registered on a Scheduler with NewQueue, for payloads of type T
// and distinct keys of type K (the payload itself when T is K). Add adds an
// entry; an entry whose key is live blocks another add of that key. An
// entry's lifecycle (see State):
//
//	Delayed ──▶ Pending ──▶ Awaiting ──▶ Running ──▶ Succeeded | Failed | Cancelled | Poisoned
//
// Delayed entries (At, After, retries, snoozes) wait on one timer for the
// whole scheduler and become pending at their time. Pending entries are
// taken highest priority first and, within a priority, in the order they
// became pending; a scheduling loop claims a batch of them (Awaiting) for an
// idle worker, which runs them one after another (Running). Final entries
// are kept for the queue's Retention, then deleted. Disabled entries are
// never dispatched until enabled and keep blocking their key. At every
// moment every entry ever added is in exactly one state, or was deleted:
// Counts gives the numbers in O(1).
//
// # Outcomes
//
// A handler's error decides what becomes of its entry: nil succeeds; an
// error made by Permanent fails it at once; Snooze runs it again later and
// Rerun at once, without spending an attempt (reruns have a cap, MaxReruns,
// past which the entry is poisoned); Cancel cancels it; any other error, or
// a panic (kept with its stack), is a failure that the RetryPolicy retries
// after Base·2ⁿ while retries are left, then fails. An error that carries
// more than one of these, wrapped or joined (Permanent(Rerun(err)), say),
// is read in the order Cancel, Snooze, Rerun, Permanent, however they nest. A handler that calls
// runtime.Goexit fails its run, and the worker is replaced. An error whose
// methods panic or end the goroutine as the run is classified (a typed nil
// whose Error dereferences it, a common mistake) fails its run, not
// retried, with a RunError that says so, and so does one that wraps itself
// or more than a thousand errors; the outcome errors built by hand
// (&PermanentError{}, a nil *RerunError) classify as their constructors'.
// Instants too far off to keep as int64 nanoseconds (an At of the year
// 3000, an After or Snooze of math.MaxInt64, a retention for ever) are kept
// as the last instant the scheduler can hold, about 190 years on: they
// still wait. A Clock may start anywhere, the zero time.Time included;
// instants are exact up to about 190 years after its first reading, and a
// Clock that moves past that (a test's, jumping) sees every later instant
// as the same one: whatever is delayed then is due at once, so that a
// snooze or a cron job runs again and again without waiting.
//
// # Scheduling
//
//   - Fairness: queues share the workers in proportion to their priorities,
//     by the slot-time their runs use (stride scheduling: see the package's
//     pick); a queue that used less is served first, and no ready queue
//     starves: with one worker and runs of equal length d, a ready queue
//     of priority p and BatchSize b waits at most (P/p·b + 2·B)·d for a
//     run while a queue of priority P and BatchSize B is saturated: with
//     batches of one, (P/p + 2)·d (TestLowPriorityIsNotStarved checks it
//     at P/p = 100). b and B are the batches taken: BatchSize, or fewer
//     for runs long enough that a batch would span over a millisecond
//     (see QueueConfig.BatchSize). A batch runs to its end: the default
//     BatchSize of 16 makes the waits of short runs 16 times as long.
//   - Caps and rates: MaxConcurrency bounds a queue's runs at once, and its
//     batches are spread over the workers (MaxConcurrency ÷ Workers
//     entries each, at least one); Rate and Burst bound how fast its runs
//     start. Both can change at run time.
//   - Pause and Resume a queue: queued entries stay, running ones finish,
//     nothing more of it starts.
//   - Groups: entries that share a group are taken together and run by one
//     worker, in order; two batches of a group never run at once.
//   - Admission: before it takes a batch, a loop asks the governor for a
//     permit charged to the queue's name, held until the batch is done.
//     If the governor does not admit it at once, the batch waits in the
//     governor's line in a goroutine of its own, with a worker reserved for
//     it, and the loop goes on to other queues: a queue whose Weight does
//     not fit the reading holds its place in the line (so that lighter work
//     cannot starve it: see governor.Governor.Acquire and Config.MaxHold),
//     not a loop, and the queues the governor admits are served meanwhile.
//     A queue has at most one batch in the line, and each holds a worker:
//     with as many queues in the line as workers, the others wait for a
//     worker. While the governor refuses, nothing is dispatched and nothing
//     spins.
//   - Stop drains: nothing new starts, running handlers finish, claimed
//     entries not started and delayed ones stay. StopAndCancel also
//     cancels the running handlers' context; a run that ends because of it
//     is a rerun.
//
// # Backends
//
// The scheduler reaches a queue's entries only through its Backend, so
// that a durable backend can serve several processes. The default is
// NewMemory, on jobkit's distinct queue; package schedtest holds the
// conformance suite every backend passes.
//
// # Faults
//
// Every method of a Scheduler, Queue, Inspector or Job that takes a
// context returns an error wrapping ErrInvalid for a nil one and the
// context's error for one that is done. Memory's methods return ErrInvalid
// for a nil context, and its management methods (Get, List, Counts,
// Delete, Retry, SetDisabled) the error of a done one; the others go on
// under a done context, as the Backend contract asks. Every method
// that returns an error returns one wrapping ErrInvalid for a Scheduler,
// Queue or Inspector not made by its constructor (nil, or the zero value),
// never a panic or a wait; of the few that return none (Name, Pause,
// Resume, Paused, Clock, Logger), those of a nil value dereference it, as
// Go's methods do.
//
// A panic of a queue's Key or Group function is an error of Add. In the
// scheduler's own goroutines, a panic of a backend's Take, Promote or
// Expire is logged and its queue left alone for a second; one of its
// Start, Settle, Renew, Progress or Counts is logged and taken as an error
// of the call (a run not started, or not settled, goes back when its batch
// ends; a Job method returns it to the handler); a metric that panics switches its queue's metrics off; a Clock
// that panics, or whose timer does, is replaced by the system clock (see
// Config.Clock); a retry policy's Delay that panics fails the entry; a
// Config.Governor that panics or fails (stopped, a Weight it can never
// grant, a Governor not made by New) as a loop asks it for a permit is
// logged and the queue left alone for a second. Each is logged, the
// backend's, the governor's and the Clock's panics with their stacks.
//
// The same holds when one of these ends the goroutine that called it
// (runtime.Goexit), which no deferred call can stop: the scheduling loop,
// worker, timekeeper or metrics loop it ended gives back what it held
// (a reserved worker, a permit, a claimed batch: the running entry runs
// again, or settles with its handler's result if the handler had
// returned) and a new one takes its place; a Delay runs on a goroutine of
// its own, so its Goexit ends only that. A backend's Renew or Progress
// that ends a handler's goroutine under Job.Heartbeat or Job.Progress so
// runs its entry again, not spending an attempt (on a goroutine the
// handler started, it ends only that one). An Add whose Clock or adds metric
// ends the caller's goroutine has stored its entry if the metric did it,
// and not if the Clock did. A dependency that faults on every call (a
// backend's Take or Start, a governor) is so retried about once a second
// per queue, not in a hot loop of new goroutines. A Logger that panics or
// ends its goroutine loses the record it was given, and nothing else. A
// Delay, a handler's error's Error method or a work-duration or retries
// metric that hangs holds its worker as a hung handler does, and no lock:
// StopAndCancel and a rescue abandon its run. A depth, unfinished-work or
// longest-running metric that hangs holds the metrics loop, which a
// StopAndCancel that abandons runs lets go with them.
//
// # Cost
//
// Per job, the in-memory backend does O(1) work (O(log d) with d delayed
// entries), and a steady stream of jobs allocates nothing per job but a
// share of a scope per batch. Measured figures, against goroutines and
// worker pools, are in bench/RESULTS.md in the repository.
package sched
