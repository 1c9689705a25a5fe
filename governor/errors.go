package governor

import "errors"

var (
	// ErrInvalidConfig is wrapped by the errors New returns for a Config it rejects.
	ErrInvalidConfig = errors.New("governor: invalid config")
	// ErrInvalidWeight is returned by Acquire for a Weight that could never be
	// granted: negative, not a number, or more slots than the Governor has.
	ErrInvalidWeight = errors.New("governor: invalid weight")
	// ErrStopped is returned by Acquire and Start once Stop has been called.
	ErrStopped = errors.New("governor: stopped")
)
