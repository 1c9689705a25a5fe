package core

import "errors"

// The errors of package distinct, which re-exports them.
var (
	ErrClosed  = errors.New("distinct: queue closed")
	ErrFull    = errors.New("distinct: queue full")
	ErrInvalid = errors.New("distinct: invalid argument")
)

// Config is distinct.Config, validated: see there.
type Config struct {
	Capacity   int
	Rerun      bool
	Timestamps bool
}
