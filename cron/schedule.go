package cron

import (
	"errors"
	"time"
)

// Schedule gives the activation times of a periodic job.
//
// Next returns the first activation strictly after t, or the zero time if
// there is none. Implementations must be monotone: if t1 is before t2, then
// Next(t1) is not after Next(t2). [Due] relies on this; a Schedule that
// breaks it gets results that are unspecified but still bounded in work, and
// a Next result that is not after its argument is read as "no further
// activation".
//
// The schedules this package builds ([Parse], [Every]) are immutable and safe
// for concurrent use, and return their times in their own location.
type Schedule interface {
	Next(t time.Time) time.Time
}

// Sentinel errors. Errors returned by this package wrap one or more of them;
// match with [errors.Is].
var (
	// ErrInvalidSpec reports a spec that Parse refuses: malformed text, a
	// spec that can never fire, an @every interval below one second, or a
	// zone prefix it cannot use.
	ErrInvalidSpec = errors.New("cron: invalid spec")

	// ErrInvalidLocation reports a nil *time.Location given to
	// [WithLocation], or a zone prefix (CRON_TZ=, TZ=) naming a zone that
	// cannot be loaded. Parse errors for a bad prefix wrap ErrInvalidSpec
	// too.
	ErrInvalidLocation = errors.New("cron: invalid location")

	// ErrInvalidInterval reports an interval below one second (zero and
	// negative included), from [Every] or from an @every spec.
	ErrInvalidInterval = errors.New("cron: invalid interval")

	// ErrInvalidBound reports a [RunEach] bound outside 1..[MaxRunEach].
	ErrInvalidBound = errors.New("cron: invalid bound")
)

// nextOf calls s.Next(t) and reports false when s has no activation after t,
// either by saying so (the zero time) or by breaking the contract (a result
// that is not after t).
func nextOf(s Schedule, t time.Time) (time.Time, bool) {
	n := s.Next(t)
	if n.IsZero() || !n.After(t) {
		return time.Time{}, false
	}
	return n, true
}
