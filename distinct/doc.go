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
//   - Valid keys only: a key that is not equal to itself (a NaN, or a
//     struct, array or interface holding one) could never be found again,
//     and one whose dynamic type cannot be hashed (a slice in an any) cannot
//     be stored, so every call refuses them: the calls that return errors
//     with one wrapping [ErrInvalid], Add with false. Only key types that can
//     hold a float or an interface pay for the check; no key set, however
//     chosen, makes the queue's tables grow faster than its items.
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
// nothing of an item once it completes. The set behind the queue is one Robin
// Hood hash table for queued and in-progress items, which leaves no
// tombstones when it deletes, so the FIFO churn of a queue (new keys in, old
// keys out) does not slow its lookups down. Structs and arrays are hashed by
// their significant bytes and strings by content, without reflection. Keys of
// integer types (any size, named types such as type JobID int64 too) are
// placed by value for as long as they do not cluster, so a queue of IDs that
// arrive roughly in order walks its memory in order, like a ring buffer,
// however large it grows, which is faster than hashed placement at large
// backlogs. Keys that cluster (producers that each own a range of IDs,
// strides) switch the table to a keyed hash while the queue fills, and then
// cost what hashed keys cost: no pattern makes placement by value slower
// than hashing (BenchmarkPlacement).
//
// Against client-go's workqueue (bench/ in the repository, BenchmarkMPMC:
// producers racing consumers), from the least favourable case to the best:
// one item at a time through an explicit scope (scope.Run around
// TakeAppend, settled when the scope closes) with string or scrambled keys
// is no faster than client-go and sometimes slower, since the scope and its
// second hold of the lock cost about as much as the queue's work; one item
// at a time through Work is faster for every key kind; batches are faster
// still, and integer IDs in order are the best case. A buffered channel,
// which deduplicates nothing, is faster than all of them. The figures, per
// key kind, path and backlog, are in bench/RESULTS.md, and the profiles of
// the cases that miss their targets in bench/results/profiles.txt.
//
// An add that wakes no taker allocates nothing, Process and Work allocate
// nothing in steady state, and a scope.Run around TakeAppend allocates a
// fraction of an allocation (the scope's share of its block); Take, unlike
// TakeAppend, also allocates its slice. Config.Timestamps adds two clock
// reads per item.
package distinct
