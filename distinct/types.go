package distinct

import "time"

// State says where an item is.
type State uint8

const (
	// Absent means the queue does not hold the item.
	Absent State = iota
	// Queued means the item waits to be taken.
	Queued
	// InProgress means the item was taken and its scope has not settled it.
	InProgress
)

// String returns "absent", "queued" or "in progress".
func (s State) String() string {
	switch s {
	case Queued:
		return "queued"
	case InProgress:
		return "in progress"
	}
	return "absent"
}

// Info describes one item the queue holds.
type Info struct {
	// State is Queued or InProgress.
	State State
	// EnqueuedAt is when the item was added (for an item put back by a failed
	// scope, when it was first added). It may be up to a microsecond early
	// for items added faster than one per microsecond. It is zero unless
	// Config.Timestamps.
	EnqueuedAt time.Time
	// TakenAt is when the item was taken; zero unless it is in progress and
	// Config.Timestamps.
	TakenAt time.Time
	// Attempts counts the scopes that failed with the item.
	Attempts int
	// Collisions counts the adds of the item rejected, or under Config.Rerun
	// deferred, because it was queued or in progress. While the item is
	// queued the count saturates at 32767.
	Collisions int
}

// Stats are a queue's counters since it was made.
type Stats struct {
	// Queued and InProgress are the numbers of items queued and in progress.
	Queued, InProgress int
	// Added counts adds that queued an item, or under Config.Rerun scheduled
	// an in-progress item to run again.
	Added uint64
	// Rejected counts adds refused because the item was queued or in
	// progress (not those refused because the queue was full or closed).
	Rejected uint64
	// Invalid counts adds refused because the key was not equal to itself
	// (NaN) or could not be hashed.
	Invalid uint64
	// Completed counts successful settlements: of items removed, and of
	// items added again while in progress (Rerun), queued once more.
	Completed uint64
	// Requeued counts items put back by a failed settlement.
	Requeued uint64
	// Removed counts items removed by Remove.
	Removed uint64
}
