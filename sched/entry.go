package sched

import (
	"fmt"
	"time"
)

// ID identifies an entry within its queue. The in-memory backend numbers
// entries from 1 in the order they were added; other backends may choose
// other numbers, but never reuse one within a queue. The zero ID is no
// entry.
type ID uint64

// State is where an entry is in its lifecycle:
//
//	Delayed ──▶ Pending ──▶ Awaiting ──▶ Running ──▶ Succeeded | Failed | Cancelled | Poisoned
//	   ▲           ▲                        │
//	   │           └──── rerun, snooze ─────┤
//	   └────────── retry, snooze ───────────┘
//
// Delayed, Pending, Awaiting and Running are live: an entry in one of them
// blocks an add of its key. Succeeded, Failed, Cancelled and Poisoned are
// final: the entry is kept for the queue's retention, then deleted.
// Disabled is not a state but a flag on a live entry (see Entry.Disabled).
type State uint8

const (
	// StateDelayed is an entry waiting for its time (C3's "initial"): added
	// with a delay, waiting for a retry, or snoozed.
	StateDelayed State = iota + 1
	// StatePending is an entry ready to run.
	StatePending
	// StateAwaiting is an entry a scheduling loop has taken for a worker
	// that has not started it yet (C3's "awaitingCompute").
	StateAwaiting
	// StateRunning is an entry whose handler runs (C3's "computing").
	StateRunning
	// StateSucceeded is an entry whose handler returned nil.
	StateSucceeded
	// StateFailed is an entry in the error queue: its handler failed and
	// no retry is left, or it failed permanently.
	StateFailed
	// StateCancelled is an entry whose handler cancelled it (see Cancel).
	StateCancelled
	// StatePoisoned is an entry that was rerun or rescued more often than
	// its queue allows.
	StatePoisoned
)

var stateNames = [...]string{
	StateDelayed:   "delayed",
	StatePending:   "pending",
	StateAwaiting:  "awaiting",
	StateRunning:   "running",
	StateSucceeded: "succeeded",
	StateFailed:    "failed",
	StateCancelled: "cancelled",
	StatePoisoned:  "poisoned",
}

// String returns the state's name: "delayed", "pending", "awaiting",
// "running", "succeeded", "failed", "cancelled" or "poisoned".
func (s State) String() string {
	if int(s) < len(stateNames) && stateNames[s] != "" {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// MarshalText returns the state's name, so that JSON shows it as text.
func (s State) MarshalText() ([]byte, error) {
	if int(s) >= len(stateNames) || stateNames[s] == "" {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, s)
	}
	return []byte(stateNames[s]), nil
}

// UnmarshalText reads a state's name, as ParseState does.
func (s *State) UnmarshalText(b []byte) error {
	v, err := ParseState(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// ParseState returns the State named s, as String writes it.
func ParseState(s string) (State, error) {
	for i, name := range stateNames {
		if name != "" && name == s {
			return State(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown state %q", ErrInvalid, s)
}

// Live reports whether an entry in state s blocks an add of its key:
// delayed, pending, awaiting and running entries do.
func (s State) Live() bool { return s >= StateDelayed && s <= StateRunning }

// Final reports whether s ends an entry's lifecycle.
func (s State) Final() bool { return s >= StateSucceeded && s <= StatePoisoned }

// Entry is a snapshot of one entry of a queue, as inspection returns it.
type Entry[T any, K comparable] struct {
	ID      ID
	Queue   string
	Key     K
	Payload T // the zero T in listings without payloads
	State   State
	// Disabled entries are never dispatched until enabled; they keep their
	// state and block adds of their key.
	Disabled bool
	Priority int
	Group    string
	// EnqueuedAt is when the entry was added; RunAt, for a delayed entry,
	// when it becomes pending.
	EnqueuedAt, RunAt time.Time
	// StartedAt is when its last run started; FinishedAt when it reached a
	// final state.
	StartedAt, FinishedAt time.Time
	// Attempts counts the runs that spent an attempt (those that failed and
	// the last one); Reruns those that ended without a result of their own
	// (Rerun, a shutdown, a rescue), Rescues those of them the reaper
	// rescued; Snoozes those that asked to run later.
	Attempts, Reruns, Rescues, Snoozes int
	// Gen is the generation of the entry's last run, its fencing token.
	Gen uint64
	// Progress is what the handler last reported with Job.Progress.
	Progress Progress
	// Errors holds the errors of its failed runs, oldest first, at most
	// the last few (see MaxErrors).
	Errors []RunError
}

// MaxErrors is the number of run errors an entry keeps.
const MaxErrors = 8

// RunError describes one failed run of an entry.
type RunError struct {
	// Attempt is the attempt the run was (1 for the first).
	Attempt int
	// At is when the run ended.
	At time.Time
	// Message is the error's message; Type its dynamic type, as %T
	// formats it (for a chain, the outermost).
	Message, Type string
	// Chain holds the types of the errors it wraps, outermost first (for a
	// join, the first branch), as errors.Unwrap finds them; at most 16.
	Chain []string `json:",omitempty"`
	// Panic reports that the handler panicked; Stack is then its stack.
	Panic bool
	Stack string `json:",omitempty"`
}

// Progress is what a handler reports of a run in progress.
type Progress struct {
	// Done and Total count units of work; Note says what is going on.
	Done, Total int64
	Note        string
}

// Claim is an entry taken to run: what a backend hands to the scheduler
// and the scheduler settles. Its fields are a copy; changing them changes
// nothing in the backend.
type Claim[T any, K comparable] struct {
	ID       ID
	Key      K
	Payload  T
	Priority int
	Group    string
	// Attempts, Reruns and Rescues are the entry's counts before this run.
	Attempts, Reruns, Rescues int
	// Gen is this run's generation: settling, renewing or rescuing a run
	// names it, and a backend ignores a stale one.
	Gen uint64
	// Handle is the backend's own: whatever helps it find the entry again
	// (the in-memory backend keeps a pointer to its record). The scheduler
	// passes it back untouched.
	Handle     any
	EnqueuedAt time.Time
	// ReadyAt is when the entry last became ready to run: its add, the
	// time its delay, retry backoff or snooze ended, or the end of a run
	// that is to run again (a rerun, a rescue). The queue-latency
	// metric counts from it. Zero stands for EnqueuedAt (a backend that
	// does not keep it).
	ReadyAt time.Time
	// Retry is the entry's retry policy, if it was added with one.
	Retry *RetryPolicy
}

// readyAt is c.ReadyAt, or EnqueuedAt if the backend left it zero.
func (c *Claim[T, K]) readyAt() time.Time {
	if c.ReadyAt.IsZero() {
		return c.EnqueuedAt
	}
	return c.ReadyAt
}

// Counts are the numbers of entries of a queue in each state. Disabled
// counts live entries that are disabled, which are also counted in their
// state.
type Counts struct {
	Delayed, Pending, Awaiting, Running              int
	Succeeded, Failed, Cancelled, Poisoned, Disabled int
	// Added counts the entries added since the backend was opened; Expired
	// those deleted when their retention ended (by age or by number), and
	// Deleted those deleted on request. Nothing is lost: at every moment
	// Added = Live() + Retained() + Expired + Deleted.
	Added, Expired, Deleted int
}

// States returns c with the totals Added, Expired and Deleted zeroed: the
// numbers by state alone.
func (c Counts) States() Counts {
	c.Added, c.Expired, c.Deleted = 0, 0, 0
	return c
}

// Of returns the count of state s.
func (c Counts) Of(s State) int {
	if p := c.of(s); p != nil {
		return *p
	}
	return 0
}

// add adds n to the count of state s.
func (c *Counts) add(s State, n int) {
	if p := c.of(s); p != nil {
		*p += n
	}
}

// of returns the field of state s, or nil.
func (c *Counts) of(s State) *int {
	switch s {
	case StateDelayed:
		return &c.Delayed
	case StatePending:
		return &c.Pending
	case StateAwaiting:
		return &c.Awaiting
	case StateRunning:
		return &c.Running
	case StateSucceeded:
		return &c.Succeeded
	case StateFailed:
		return &c.Failed
	case StateCancelled:
		return &c.Cancelled
	case StatePoisoned:
		return &c.Poisoned
	}
	return nil
}

// Live returns the number of live entries.
func (c Counts) Live() int { return c.Delayed + c.Pending + c.Awaiting + c.Running }

// Retained returns the number of entries kept in a final state.
func (c Counts) Retained() int { return c.Succeeded + c.Failed + c.Cancelled + c.Poisoned }
