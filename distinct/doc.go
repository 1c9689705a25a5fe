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
//     allocation-free form for a function that handles one batch.
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
// nothing of an item once it completes. The set behind the queue is a hash
// table that leaves no tombstones when it deletes, so the FIFO churn of a
// queue (new keys in, old keys out) does not slow its lookups down, and a
// queued int costs about 42 bytes (0.9× client-go's workqueue).
//
// On two cores, with producers racing consumers, items go through add, take
// and complete in 0.5–0.85× the time of client-go's workqueue one at a time,
// and 0.3–0.4× in batches of 16; a rejected duplicate add costs 0.8–1.1× of
// client-go's. bench/RESULTS.md in the repository has every scenario and
// ratio; the benchmarks in this package (BenchmarkQueue_*) give the
// single-goroutine costs. An add that wakes no taker allocates nothing, and
// Process allocates nothing in steady state. Config.Timestamps adds two clock
// reads per item.
package distinct
