package sched

import (
	"context"
	"iter"
	"time"

	"github.com/jobkit/jobkit/scope"
)

// Backend stores the entries of one queue. The scheduler reaches a queue's
// entries only through it, so that a durable backend (PostgreSQL, with
// FOR UPDATE SKIP LOCKED and LISTEN/NOTIFY) can serve several processes
// without changes to the scheduler, cron or recovery. NewMemory returns the
// in-memory backend, the default; package schedtest has the conformance
// suite that every backend passes (schedtest.TestBackend), which is where
// this contract is checked.
//
// All methods are safe for concurrent use. A backend holds the state of
// every entry: what Take hands out is a copy (a Claim), and only Settle,
// Start, Renew and the management calls change an entry.
//
// The contract, in short:
//   - Keys: at most one live entry (delayed, pending, awaiting, running)
//     per key; Add of a key with a live entry adds nothing and returns that
//     entry's ID. With QueueInfo.BlockFailed a failed entry blocks its key too.
//   - Order: Take hands out pending, enabled entries by priority, highest
//     first, and in the order they were added within a priority; entries
//     whose time has come are pending. An entry without a group put back
//     by a failed scope or settled with OutcomeRerun returns to its
//     position.
//   - Groups: entries with a group are taken together, in the order they
//     were added, up to max, and no entry of a group is taken while another
//     of it is awaiting or running. Entries of a group put back keep their
//     order within it; where the group comes among the other entries of
//     its priority is the backend's to choose (Memory queues it again at
//     the tail). A queue not opened as Grouped refuses an entry with a
//     group (ErrInvalid).
//   - Fencing: every run gets a generation larger than the entry's last;
//     Start, Settle, Renew and Progress of another generation return
//     ErrStale and change nothing, and so does a rescue's Settle
//     (Outcome.LapsedBefore) of a claim whose lease was renewed since the
//     reaper found it lapsed.
//   - Scopes: Take registers on s; when s closes, entries it took that were
//     not settled go back to pending at their positions, as a rerun.
//   - Retention: final entries are kept while QueueInfo.Retention says, then
//     deleted; Counts is exact at every moment and costs O(1).
//   - Contexts: ctx bounds the call's waits and I/O. The scheduler calls
//     Start, Settle, Renew and Progress under the run's context, which
//     StopAndCancel cancels, and settles the runs it ends that way: those
//     four must not refuse a done context (Memory, which never waits,
//     refuses only a nil one there). A worker's Start or Settle that
//     waits holds up its own batch only: the reaper leaves that batch for
//     a later sweep (see Inspector.Reap), and nothing but StopAndCancel
//     cancels the context it waits under, so a backend bounds its waits
//     (a statement timeout, say).
type Backend[T any, K comparable] interface {
	// Open binds the backend to its queue. NewQueue calls it once, before
	// any other method.
	Open(q QueueInfo) error

	// Add stores an entry for a. It returns the new entry's ID and true;
	// or, when an entry with a.Key blocks it, that entry's ID and false.
	Add(ctx context.Context, a NewEntry[T, K]) (ID, bool, error)

	// Take moves up to r.Max pending entries to StateAwaiting, appends
	// their claims to dst and returns it, registering on s what puts them
	// back if s closes before they are settled. It does not wait: with
	// nothing to take it returns dst as it is. Entries of one group come in
	// one Take, alone. Delayed entries whose time is not after r.Now are
	// pending first. Each claimed entry's lease runs until r.LeaseUntil
	// (the zero time: no lease).
	Take(ctx context.Context, s *scope.Scope, r TakeRequest, dst []Claim[T, K]) ([]Claim[T, K], error)

	// Start moves the claimed entry to StateRunning at now, with the lease
	// running until leaseUntil (the zero time: the take's lease, if any,
	// stays as it was).
	Start(ctx context.Context, c *Claim[T, K], now, leaseUntil time.Time) error

	// Settle records how the run of c ended and moves the entry on.
	Settle(ctx context.Context, c *Claim[T, K], o Outcome) error

	// Renew extends the lease of the run of entry id with generation gen to
	// until.
	Renew(ctx context.Context, id ID, gen uint64, until time.Time) error

	// Progress records what the run of entry id with generation gen
	// reports.
	Progress(ctx context.Context, id ID, gen uint64, p Progress) error

	// Promote makes the delayed entries whose time is not after now
	// pending, and returns when the earliest entry still delayed is due, or
	// false if none is.
	Promote(ctx context.Context, now time.Time) (time.Time, bool, error)

	// Counts returns the numbers of entries by state, in O(1).
	Counts(ctx context.Context) (Counts, error)

	// Expired appends to dst the claims of running or awaiting entries
	// whose lease ended before now, for the reaper to rescue.
	Expired(ctx context.Context, now time.Time, dst []Claim[T, K]) ([]Claim[T, K], error)

	// Get returns the entry with the ID, with its payload, or ErrNotFound.
	Get(ctx context.Context, id ID) (Entry[T, K], error)

	// List yields the entries that match f in ascending ID order, from
	// after f.After on, in constant space; with payloads only if
	// f.Payloads. The iteration sees each entry at most once; entries added
	// or changed while it runs may or may not be seen.
	List(ctx context.Context, f Filter[T, K]) iter.Seq2[Entry[T, K], error]

	// Delete deletes the entries that match f and are not awaiting or
	// running, and returns how many it deleted.
	Delete(ctx context.Context, f Filter[T, K]) (int, error)

	// Retry makes final entries that match f pending again at now (their
	// Claim.ReadyAt), with their attempts reset if reset, and returns how
	// many it made pending. Live entries that match f are left as they
	// are, and so is a final entry whose key a live entry holds (see
	// Keys); neither is counted.
	Retry(ctx context.Context, f Filter[T, K], reset bool, now time.Time) (int, error)

	// SetDisabled disables or enables the live entry with the ID.
	SetDisabled(ctx context.Context, id ID, disabled bool) error

	// Expire deletes final entries whose retention ended before now, and
	// returns when the next one ends (false: none is retained).
	Expire(ctx context.Context, now time.Time) (time.Time, bool, error)
}

// QueueInfo is what a backend learns of its queue when it is opened.
type QueueInfo struct {
	// Name is the queue's name.
	Name string
	// Notify is called when entries become ready to take (an add, a
	// requeue, an enable), so that the scheduler wakes. It does not block.
	Notify func()
	// Retention says how long final entries are kept.
	Retention Retention
	// BlockFailed makes failed entries block adds of their key.
	BlockFailed bool
	// Grouped says that entries may have a group: each Take then takes one
	// group, or one entry without a group.
	Grouped bool
}

// TakeRequest says what Take takes.
type TakeRequest struct {
	// Now is the time of the take; Max the most entries it takes (at least
	// one).
	Now time.Time
	Max int
	// LeaseUntil is when the leases of the claimed entries end, unless
	// renewed; the zero time gives them none.
	LeaseUntil time.Time
}

// NewEntry is an entry to add.
type NewEntry[T any, K comparable] struct {
	Key      K
	Payload  T
	Priority int
	Group    string
	// Now is when it is added; RunAt, if after Now, when it becomes pending.
	Now, RunAt time.Time
	Disabled   bool
	Retry      *RetryPolicy
}

// OutcomeKind says how a run ended, for Settle.
type OutcomeKind uint8

const (
	// OutcomeSucceeded: the handler returned nil. The entry succeeded.
	OutcomeSucceeded OutcomeKind = iota + 1
	// OutcomeRetry: the handler failed and a retry is left. The entry is
	// delayed until Outcome.At and one attempt is spent.
	OutcomeRetry
	// OutcomeFailed: the handler failed, permanently or with no retry left.
	// The entry is failed; one attempt is spent.
	OutcomeFailed
	// OutcomeSnooze: the handler asked to run again later. The entry is
	// delayed until Outcome.At; no attempt is spent.
	OutcomeSnooze
	// OutcomeRerun: the run ended without a result of its own (shutdown,
	// rescue). The entry is pending again at its position; no attempt is
	// spent.
	OutcomeRerun
	// OutcomeCancelled: the handler cancelled the entry.
	OutcomeCancelled
	// OutcomePoisoned: the entry was rerun or rescued more often than its
	// queue allows.
	OutcomePoisoned
)

var outcomeNames = [...]string{
	OutcomeSucceeded: "succeeded", OutcomeRetry: "retry", OutcomeFailed: "failed",
	OutcomeSnooze: "snooze", OutcomeRerun: "rerun", OutcomeCancelled: "cancelled",
	OutcomePoisoned: "poisoned",
}

// String returns the outcome's name.
func (k OutcomeKind) String() string {
	if int(k) < len(outcomeNames) && outcomeNames[k] != "" {
		return outcomeNames[k]
	}
	return "OutcomeKind(?)"
}

// Outcome is how one run ended.
type Outcome struct {
	Kind OutcomeKind
	// At is when a retried or snoozed entry becomes pending.
	At time.Time
	// Finished is when the run ended.
	Finished time.Time
	// Err describes the failure, for OutcomeRetry, OutcomeFailed and
	// OutcomePoisoned.
	Err *RunError
	// Rescued marks a rerun forced by the reaper; it counts as a rescue.
	Rescued bool
	// LapsedBefore, if not zero, is the cutoff of the reaper's Expired
	// that found the claim lapsed, for a rescue (Rescued) of a claim no
	// batch of this process holds: another process's, whose run may have
	// started or beaten since, or one of a Take in flight, whose batch
	// may have gone live and started it since. Settle then settles it
	// only if its lease still ends before LapsedBefore, and otherwise
	// returns ErrStale and changes nothing.
	LapsedBefore time.Time
}

// Retention says how long entries in final states are kept before they are
// deleted: for a time, and at most a number per state. The oldest go first.
type Retention struct {
	// Succeeded, Failed and Cancelled are how long entries in each state
	// are kept; Poisoned entries are kept as long as failed ones. Zero
	// deletes them at once.
	Succeeded, Failed, Cancelled time.Duration
	// MaxSucceeded, MaxFailed and MaxCancelled bound how many entries are
	// kept in each state (failed and poisoned together); zero keeps none.
	MaxSucceeded, MaxFailed, MaxCancelled int
}

// DefaultRetention keeps succeeded and cancelled entries for a minute, at
// most 1,000 of each, and failed ones for a week, at most 10,000: enough to
// look at what just happened and at the error queue, little enough that an
// in-memory queue running a million jobs a minute stays small.
var DefaultRetention = Retention{
	Succeeded: time.Minute, MaxSucceeded: 1000,
	Cancelled: time.Minute, MaxCancelled: 1000,
	Failed: 7 * 24 * time.Hour, MaxFailed: 10_000,
}

// Filter selects entries for List, Delete, Retry and Count. The zero Filter
// selects every entry.
type Filter[T any, K comparable] struct {
	// States, if not empty, selects entries in one of them.
	States []State
	// Key, if not nil, selects entries whose key it accepts (a prefix of a
	// string key, say).
	Key func(K) bool
	// From and To, if not zero, select entries enqueued at or after From
	// and before To.
	From, To time.Time
	// Match, if not nil, selects entries it accepts. It sees the payload
	// only if Payloads.
	Match func(*Entry[T, K]) bool
	// After, if not zero, selects entries with a larger ID: the cursor of
	// keyset paging. Until, if not zero, selects entries with an ID at most
	// Until; a backend stops looking past it.
	After, Until ID
	// Payloads asks List to fill in payloads, and Match to see them.
	Payloads bool
}
