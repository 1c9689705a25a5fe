package distinct

import (
	"fmt"

	"github.com/jobkit/jobkit/distinct/internal/core"
)

var (
	// ErrClosed is returned by adds that report errors once the queue is
	// closed, and by Take and Process once it is closed and nothing is queued.
	ErrClosed = core.ErrClosed
	// ErrFull is returned by TryAdd when the queue holds Config.Capacity items.
	ErrFull = core.ErrFull
	// ErrInvalid is wrapped by the errors returned for invalid arguments and
	// configuration: a max below one, a nil context, scope or function, a
	// negative capacity.
	ErrInvalid = core.ErrInvalid
)

// Config configures a Queue. The zero Config is valid and gives an unbounded
// queue that rejects adds of in-progress items.
type Config struct {
	// Capacity bounds how many distinct items the queue holds, queued and in
	// progress together. When it is reached, Add and AddAll refuse new items,
	// TryAdd returns ErrFull and AddWait waits for room. Items put back by a
	// failed scope never count twice, so settling never exceeds it. Defaults
	// to 0: unbounded.
	Capacity int

	// Rerun selects client-go's "dirty" semantics for an item added while it
	// is in progress: instead of rejecting the add, the queue accepts it and
	// queues the item once more, at the tail, when its scope succeeds. (When
	// the scope fails the item goes back to its original position anyway.)
	// Defaults to false: adding an in-progress item is rejected, as in the ZIO
	// design.
	Rerun bool

	// Timestamps records when each item was enqueued and taken, for
	// Info.EnqueuedAt and Info.TakenAt. It costs two clock reads per item
	// (figures: BenchmarkQueue_TakeComplete with timestamps=on against
	// without, bench/RESULTS.md in the repository, section 6.5). Defaults
	// to false: the times stay zero and the queue never reads the clock, as
	// client-go's workqueue without metrics.
	Timestamps bool
}

func (c Config) validate() error {
	if c.Capacity < 0 {
		return fmt.Errorf("%w: Capacity %d < 0", ErrInvalid, c.Capacity)
	}
	return nil
}
