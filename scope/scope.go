package scope

import (
	"errors"
	"sync"
)

// ErrClosed is returned when work is registered on a scope that has already
// closed.
var ErrClosed = errors.New("scope: closed")

// ErrFailed is the error of a failed Exit made from a nil error.
var ErrFailed = errors.New("scope: failed")

// A Finalizer releases something when its scope closes. It sees the scope's
// Exit and may return an error, which Close joins with the others.
type Finalizer interface {
	Finalize(Exit) error
}

// FinalizerFunc adapts a function to the Finalizer interface.
type FinalizerFunc func(Exit) error

// Finalize calls f(exit).
func (f FinalizerFunc) Finalize(exit Exit) error { return f(exit) }

// A Scope is a lifetime: it collects finalizers while open and runs them once,
// in reverse order, when closed.
//
// The zero value is an open, empty scope. A Scope must not be copied after
// first use. All methods are safe for concurrent use. Everything a finalizer
// did happens before Close returns, for every caller of Close.
//
// A Scope costs one small allocation; registering up to two finalizers
// allocates nothing more.
type Scope struct {
	mu      sync.Mutex
	state   state
	exit    Exit
	fins    []Finalizer
	inline  [2]Finalizer  // backing store for the first finalizers
	settled chan struct{} // made by a Close that waits for another; closed when done
}

type state uint8

const (
	open state = iota
	closing
	closed
)

// New returns an open scope. It is the same as new(Scope).
func New() *Scope { return new(Scope) }

// Add registers f to run when the scope closes. If the scope is already
// closing or closed, f runs at once, in the caller's goroutine, with the
// scope's Exit, and Add returns its error (a panic in f is returned as a
// *PanicError). A nil f is ignored.
func (s *Scope) Add(f Finalizer) error {
	if f == nil {
		return nil
	}
	if s.TryAdd(f) {
		return nil
	}
	s.mu.Lock()
	exit := s.exit
	s.mu.Unlock()
	return finalize(f, exit)
}

// TryAdd registers f to run when the scope closes and reports true, or, if
// the scope is already closing or closed, reports false and does not run f.
// It is for resources that must not be handed out under a closed scope.
func (s *Scope) TryAdd(f Finalizer) bool {
	if f == nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != open {
		return false
	}
	if s.fins == nil {
		s.fins = s.inline[:0]
	}
	s.fins = append(s.fins, f)
	return true
}

// Defer registers fn to run when the scope closes; it is Add(FinalizerFunc(fn)).
func (s *Scope) Defer(fn func(Exit) error) error {
	if fn == nil {
		return nil
	}
	return s.Add(FinalizerFunc(fn))
}

// Closed reports whether Close has been called.
func (s *Scope) Closed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state != open
}

// Close ends the scope with exit: it runs every finalizer, last registered
// first, each exactly once, all of them even when some fail or panic, and
// returns their errors joined (a panic becomes a *PanicError). Close is
// idempotent: only the first call's exit counts, and a later or concurrent
// call waits until the finalizers have run and returns nil.
func (s *Scope) Close(exit Exit) error {
	s.mu.Lock()
	switch s.state {
	case closed:
		s.mu.Unlock()
		return nil
	case closing:
		if s.settled == nil {
			s.settled = make(chan struct{})
		}
		done := s.settled
		s.mu.Unlock()
		<-done
		return nil
	}
	s.state = closing
	s.exit = exit
	fins := s.fins
	s.fins = nil
	s.mu.Unlock()

	var errs []error
	for i := len(fins) - 1; i >= 0; i-- {
		if err := finalize(fins[i], exit); err != nil {
			errs = append(errs, err)
		}
		fins[i] = nil
	}

	s.mu.Lock()
	s.state = closed
	if s.settled != nil {
		close(s.settled)
	}
	s.mu.Unlock()
	return join(errs...)
}

// finalize runs f with exit, turning a panic into a *PanicError.
func finalize(f Finalizer, exit Exit) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = recovered(v)
		}
	}()
	return f.Finalize(exit)
}

// join returns nil when every error is nil, the only non-nil error as it is
// (so that == comparisons with sentinels keep working), or errors.Join of all.
func join(errs ...error) error {
	var first error
	n := 0
	for _, err := range errs {
		if err != nil {
			if n == 0 {
				first = err
			}
			n++
		}
	}
	if n <= 1 {
		return first
	}
	return errors.Join(errs...)
}
