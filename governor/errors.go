package governor

import (
	"errors"
	"fmt"

	"github.com/jobkit/jobkit/internal/panicval"
)

var (
	// ErrInvalidConfig is wrapped by the errors New returns for a Config it
	// rejects, and by those of Start, Acquire and Stop for a Governor not
	// made by New or a nil context.
	ErrInvalidConfig = errors.New("governor: invalid config")
	// ErrInvalidWeight is returned by Acquire for a Weight that could never be
	// granted: negative, not a number, or more slots than the Governor has.
	ErrInvalidWeight = errors.New("governor: invalid weight")
	// ErrInvalidReading is wrapped by the error of a sample whose Reading the
	// Governor rejects: a CPU figure that is not a number, infinite or out of
	// range. Such a sample counts as failed.
	ErrInvalidReading = errors.New("governor: invalid reading")
	// ErrSamplerLate is wrapped by Snapshot.Err while the reading is stale
	// because no sample has returned for two intervals: the Sampler hangs.
	ErrSamplerLate = errors.New("governor: sampler late")
	// ErrSamplerGoexit is the error of a sample whose Sampler called
	// runtime.Goexit.
	ErrSamplerGoexit = errors.New("governor: sampler called runtime.Goexit")
	// ErrStopped is returned by Acquire and Start once Stop has been called.
	ErrStopped = errors.New("governor: stopped")

	// errNotMade is returned by Start and Acquire, and held by Snapshot.Err,
	// for a Governor not made by New.
	errNotMade = fmt.Errorf("%w: a Governor not made by New", ErrInvalidConfig)

	// errNilCtx is returned by Start, Acquire and Stop for a nil context.
	errNilCtx = fmt.Errorf("%w: nil context", ErrInvalidConfig)
)

// PanicError is the error of a sample whose Sampler panicked. The Governor
// recovers the panic, keeps its last good reading, marks it stale, logs the
// panic with its stack and goes on sampling; Snapshot.Err holds the
// PanicError until a sample succeeds.
type PanicError struct {
	// Value is the value the Sampler (or, on the sampling goroutine,
	// Config.NowFunc) panicked with (a *runtime.PanicNilError for
	// panic(nil)).
	Value any
	// Stack is the stack of the goroutine that panicked, as runtime/debug.Stack
	// formats it.
	Stack []byte
}

// Error returns "governor: sampler panicked: " and the panic's value.
func (e *PanicError) Error() string {
	return "governor: sampler panicked: " + panicval.String(e.Value)
}

// Unwrap returns the panic's value if it is an error, or nil.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}
