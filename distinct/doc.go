// Package distinct provides a deduplicating FIFO job queue whose consumers
// take items inside a scope: when the scope closes successfully the items are
// removed, when it fails they go back to the queue in their original
// position.
//
// The queue is a linked hash set of items, each queued or in progress:
//
//   - Distinct: adding an item that is queued keeps its position and reports
//     false; adding one that is in progress is rejected too, unless
//     Config.Rerun asks for client-go's semantics (the item runs once more
//     after its scope closes).
//   - FIFO: [Queue.Take] returns the oldest queued items, up to a maximum.
//     Items a failed scope puts back return to their original positions, so
//     the queue order never depends on who failed when.
//   - Scoped: Take registers one finalizer on a [scope.Scope]; the scope's
//     [scope.Exit] decides whether the items are removed (success) or put back
//     (failure, panic, interruption). Single items of a batch can be settled
//     early with [Queue.Complete] and [Queue.Fail]. [Queue.Process] is the
//     allocation-free form for a function that handles one batch, and
//     [Queue.Work] the consumer loop, which settles a batch and takes the
//     next under one hold of the lock.
//   - Blocking: Take waits for an item and honours its context; cancellation
//     returns the context's error and leaves the queue unchanged. An add wakes
//     one waiting taker, not all of them.
//   - Closing: after [Queue.Close] adds are refused and takers drain what is
//     queued, then get [ErrClosed]; [Queue.Drain] also waits until every
//     scope has settled.
//   - Bounded, optionally: with Config.Capacity an add that would exceed it
//     fails ([Queue.Add], [Queue.TryAdd]) or waits for room ([Queue.AddWait]).
//
// Reads ([Queue.Queued], [Queue.InProgress], [Queue.Info]) take the read side
// of a read/write gate and run in parallel with each other; writes are
// exclusive, and a waiting writer keeps new readers out so it is not starved.
// Activity (an add, a requeue, a close) is broadcast to waiters on a channel
// that is closed and replaced, made only when somebody waits.
//
// # Cost
//
// Adding, taking and settling cost O(1) per item, or O(log r) for the r items
// put back by failed scopes, whatever the number in progress; the queue keeps
// nothing of an item once it completes. The set behind the queue is a Robin
// Hood hash table that leaves no tombstones when it deletes, so the FIFO churn
// of a queue (new keys in, old keys out) does not slow its lookups down.
// Keys of the built-in integer types (int, int64, uint64, uint, int32,
// uint32; not named types) are placed by value for as long as they do not
// cluster, so a queue of IDs that arrive roughly in order walks its memory
// in order, like a ring buffer, however large it grows: at a million queued
// items that is about 4× faster than hashed placement
// (BenchmarkQueue_KeyPattern). Keys that cluster switch the table to a keyed
// hash after a few rehashes at most.
// A queued int costs about 42 bytes (0.9× client-go's workqueue).
//
// On two cores, with producers racing consumers over IDs in order, items go
// through add, take and complete in 0.31–0.51× the time of client-go's
// workqueue one at a time, and 0.24–0.32× in batches of 16; a rejected
// duplicate add costs 0.69–0.79× of client-go's. A buffered channel, which
// deduplicates nothing, is 3.7–5.7× faster. bench/RESULTS.md in the repository
// has every scenario and ratio; the benchmarks in this package
// (BenchmarkQueue_*) give the single-goroutine costs. An add that wakes no
// taker allocates nothing, and Process and Work allocate nothing in steady
// state. Config.Timestamps adds two clock reads per item.
package distinct
