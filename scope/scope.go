package scope

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

var (
	// ErrClosed is returned when work is registered on a scope that has
	// already closed.
	ErrClosed = errors.New("scope: closed")

	// ErrFailed is the error of a failed Exit made from a nil error.
	ErrFailed = errors.New("scope: failed")

	// ErrInvalid is wrapped by the errors returned for invalid arguments: a
	// nil context, function or finalizer.
	ErrInvalid = errors.New("scope: invalid argument")

	// ErrGoexit is the error of the failed Exit with which [Run] closes its
	// scope when its function calls [runtime.Goexit], as testing.T.FailNow
	// does.
	ErrGoexit = errors.New("scope: runtime.Goexit called")
)

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
// did happens before Close returns, for every caller of Close except one
// called from a finalizer (see Close).
//
// A Scope from [New] or [Run] is carved from a block of scopes allocated
// together, 292 scopes of 56 bytes in one 16 KiB allocation, and never reused
// for another scope, so a *Scope kept after its Run returned stays a closed
// scope (and keeps its block's 16 KiB in memory). Registering one finalizer
// allocates nothing more; a second one allocates the room for the rest.
type Scope struct {
	// mu guards the fields below it, and registration against Close.
	mu sync.Mutex
	// state holds the phase (open, closing, closed), whether a Close waits
	// for the closing one (see finish), and the kind of the exit. The phase
	// and kind are written with mu held.
	state atomic.Uint32
	err   error     // the exit's error, once closing
	fin   Finalizer // the only finalizer, until a second one is registered
	more  *more     // the finalizers, once there are two or more; the wait of Close
}

// more is the rarely needed part of a Scope.
type more struct {
	fins    []Finalizer   // in the order of registration
	settled chan struct{} // made by a waiting Close; closed once the finalizers ran
}

// The bits of Scope.state.
const (
	closing   uint32 = 1 << iota // Close was called
	closed                       // the finalizers ran
	waiting                      // a Close waits for the closing one
	kindShift = iota             // the exit's Kind, from here up
)

// New returns an open scope. It is the same as new(Scope), but cheaper: see
// [Scope].
func New() *Scope { return newScope() }

// exitLocked returns the scope's exit; it needs s.mu and a closing scope.
func (s *Scope) exitLocked() Exit {
	return Exit{kind: Kind(s.state.Load() >> kindShift), err: s.err}
}

// Add registers f to run when the scope closes. If the scope is already
// closing or closed, f runs at once, in the caller's goroutine, with the
// scope's Exit, and Add returns its error (a panic in f is returned as a
// *PanicError). A nil f, or a nil FinalizerFunc, is refused with an error
// wrapping [ErrInvalid], whatever the state of the scope.
func (s *Scope) Add(f Finalizer) error {
	if err := checkFinalizer(f); err != nil {
		return err
	}
	if s.TryAdd(f) {
		return nil
	}
	s.mu.Lock()
	exit := s.exitLocked()
	s.mu.Unlock()
	return finalize(f, exit)
}

// checkFinalizer returns an error wrapping ErrInvalid for a finalizer that
// could only fail when run.
func checkFinalizer(f Finalizer) error {
	if f == nil {
		return fmt.Errorf("%w: nil finalizer", ErrInvalid)
	}
	if fn, ok := f.(FinalizerFunc); ok && fn == nil {
		return fmt.Errorf("%w: nil FinalizerFunc", ErrInvalid)
	}
	return nil
}

// TryAdd registers f to run when the scope closes and reports true, or, if
// the scope is already closing or closed, reports false and does not run f.
// It is for resources that must not be handed out under a closed scope. A
// nil f, or a nil FinalizerFunc, is not registered: TryAdd reports false.
func (s *Scope) TryAdd(f Finalizer) bool {
	if checkFinalizer(f) != nil {
		return false
	}
	s.mu.Lock()
	if s.state.Load()&closing != 0 {
		s.mu.Unlock()
		return false
	}
	switch {
	case s.more != nil && len(s.more.fins) > 0:
		s.more.fins = append(s.more.fins, f)
	case s.fin == nil:
		s.fin = f
	default:
		if s.more == nil {
			s.more = new(more)
		}
		s.more.fins = append(make([]Finalizer, 0, 4), s.fin, f)
		s.fin = nil
	}
	s.mu.Unlock()
	return true
}

// Defer registers fn to run when the scope closes; it is Add(FinalizerFunc(fn)),
// and so refuses a nil fn with an error wrapping [ErrInvalid].
func (s *Scope) Defer(fn func(Exit) error) error {
	return s.Add(FinalizerFunc(fn))
}

// Closed reports whether Close has been called. It does not block.
func (s *Scope) Closed() bool { return s.state.Load()&closing != 0 }

// Close ends the scope with exit: it runs every finalizer, last registered
// first, each exactly once, all of them even when some fail, panic or call
// runtime.Goexit, and returns their errors joined (a panic becomes a
// *PanicError). If a finalizer calls runtime.Goexit, Close runs the rest of
// them and closes the scope, and the goroutine then goes on exiting: that
// Close does not return.
//
// Close is idempotent: only the first call's exit counts. A later or
// concurrent call returns nil once the finalizers have run, so that what
// they did happens before it returns. A call made from inside a finalizer,
// of this scope or of another (a finalizer that closes its own scope, say),
// returns nil at once instead: waiting there could wait for itself.
func (s *Scope) Close(exit Exit) error {
	s.mu.Lock()
	if s.state.Load()&closing != 0 {
		s.mu.Unlock()
		s.awaitClosed()
		return nil
	}
	s.state.Or(closing | uint32(exit.kind)<<kindShift)
	s.err = exit.err
	fin := s.fin
	s.fin = nil
	var fins []Finalizer
	if s.more != nil {
		fins = s.more.fins
		s.more.fins = nil
	}
	s.mu.Unlock()
	switch {
	case fins != nil:
		defer s.finish() // even if a finalizer calls runtime.Goexit
		return finalizeAll(fins, exit)
	case fin != nil:
		defer s.finish()
		return finalize(fin, exit)
	}
	s.finish()
	return nil
}

// finish marks the scope closed after its finalizers have run, and wakes the
// Close calls that wait for them. Its atomic update of the state and the one
// in awaitClosed are ordered, so that at least one sees the other's: either
// finish sees the waiting bit and closes settled, or awaitClosed sees the
// scope closed.
func (s *Scope) finish() {
	if s.state.Or(closed)&waiting != 0 {
		s.mu.Lock()
		if s.more != nil && s.more.settled != nil {
			close(s.more.settled)
		}
		s.mu.Unlock()
	}
}

// awaitClosed waits until the finalizers of a closing scope have run, unless
// the caller runs inside a finalizer.
func (s *Scope) awaitClosed() {
	if s.state.Load()&closed != 0 || inFinalizer() {
		return
	}
	s.mu.Lock()
	if s.state.Or(waiting)&closed != 0 {
		s.mu.Unlock()
		return
	}
	if s.more == nil {
		s.more = new(more)
	}
	if s.more.settled == nil {
		s.more.settled = make(chan struct{})
	}
	done := s.more.settled
	s.mu.Unlock()
	<-done
}

// finalizeAll runs fins, last first, each exactly once, and joins their
// errors. If one calls runtime.Goexit, the rest run on the way out.
func finalizeAll(fins []Finalizer, exit Exit) error {
	var errs []error
	i := len(fins) - 1
	defer func() {
		if i >= 0 { // fins[i] called runtime.Goexit
			fins[i] = nil
			_ = finalizeAll(fins[:i], exit)
		}
	}()
	for ; i >= 0; i-- {
		if err := finalize(fins[i], exit); err != nil {
			errs = append(errs, err)
		}
		fins[i] = nil
	}
	return join(errs...)
}

// finalize runs f with exit, turning a panic into a *PanicError. Its frame
// marks a goroutine as running a finalizer: see inFinalizer.
//
//go:noinline
func finalize(f Finalizer, exit Exit) (err error) {
	returned := false
	defer func() {
		if v := recover(); v != nil {
			err = recovered(v)
		} else if !returned {
			// Goexit, whose goroutine goes on ending; or, under
			// GODEBUG=panicnil=1, a panic(nil), which recover cannot tell
			// from it and stops: a failure, not a finalizer that returned.
			err = ErrGoexit
		}
	}()
	err = f.Finalize(exit)
	returned = true
	return err
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
