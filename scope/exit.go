package scope

import (
	"context"
	"errors"
	"fmt"

	"github.com/jobkit/jobkit/internal/errchain"
	"github.com/jobkit/jobkit/internal/panicval"
)

// Kind says how a scope ended.
type Kind uint8

const (
	// KindSuccess means the work finished without error.
	KindSuccess Kind = iota
	// KindFailure means the work returned an error.
	KindFailure
	// KindPanic means the work panicked; the Exit's error is a *PanicError.
	KindPanic
	// KindInterrupted means the work stopped because its context was
	// cancelled; the Exit's error is the context's cause.
	KindInterrupted
)

// String returns the kind's name: "success", "failure", "panic" or
// "interrupted".
func (k Kind) String() string {
	switch k {
	case KindSuccess:
		return "success"
	case KindFailure:
		return "failure"
	case KindPanic:
		return "panic"
	case KindInterrupted:
		return "interrupted"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Exit says how a scope ended: its kind and, unless it succeeded, the error
// that ended it. The zero Exit is a success. Exits are small values; copy them
// freely.
type Exit struct {
	kind Kind
	err  error
}

// Succeeded returns the Exit of work that finished without error.
func Succeeded() Exit { return Exit{} }

// Failed returns the Exit of work that returned err. A nil err is reported as
// [ErrFailed], so a failed Exit always carries an error.
func Failed(err error) Exit {
	if err == nil {
		err = ErrFailed
	}
	return Exit{kind: KindFailure, err: err}
}

// Panicked returns the Exit of work that panicked. A nil p is reported as a
// panic with a nil value and no stack.
func Panicked(p *PanicError) Exit {
	if p == nil {
		p = &PanicError{}
	}
	return Exit{kind: KindPanic, err: p}
}

// Interrupted returns the Exit of work stopped by a cancelled context, with
// the cancellation's cause (see [context.Cause]). A nil cause is reported as
// [context.Canceled].
func Interrupted(cause error) Exit {
	if cause == nil {
		cause = context.Canceled
	}
	return Exit{kind: KindInterrupted, err: cause}
}

// Kind reports how the scope ended.
func (e Exit) Kind() Kind { return e.kind }

// Succeeded reports whether the scope ended in success.
func (e Exit) Succeeded() bool { return e.kind == KindSuccess }

// Failed reports whether the scope ended in anything but success: a failure,
// a panic or an interruption.
func (e Exit) Failed() bool { return e.kind != KindSuccess }

// Err returns nil for a success, the error for a failure, the *PanicError for
// a panic and the context's cause for an interruption.
func (e Exit) Err() error { return e.err }

// String describes the Exit, such as "success" or "failure: boom".
func (e Exit) String() string {
	if e.err == nil {
		return e.kind.String()
	}
	if p, ok := e.err.(*PanicError); ok && p != nil {
		return fmt.Sprintf("%s: %s", e.kind, panicval.String(p.Value))
	}
	return fmt.Sprintf("%s: %v", e.kind, e.err)
}

// ExitOf classifies the outcome of work that ran under ctx and returned err:
// nil is a success (even if ctx was cancelled meanwhile, since cancellation is
// cooperative); an error that is or wraps a *PanicError is a panic; an error
// that is or wraps ctx's error or cause, once ctx is done, is an interruption
// carrying the cause; any other error is a failure. A nil *PanicError
// carries no panic: it is a failure.
//
// An error that wraps more than a thousand errors in all, or wraps itself
// (its Unwrap returns it, or an error that wraps it), is a failure: its
// chain is not searched, since errors.Is and errors.As would walk a cycle
// for ever. ExitOf calls err's Unwrap, Is and As methods, and lets a panic
// of theirs through (Run and Call recover it as a panic of f).
func ExitOf(ctx context.Context, err error) Exit {
	if err == nil {
		return Exit{}
	}
	if errchain.Long(err, errchain.Max) {
		return Exit{kind: KindFailure, err: err}
	}
	var p *PanicError
	if errors.As(err, &p) && p != nil {
		return Exit{kind: KindPanic, err: p}
	}
	if ctx != nil {
		if cerr := ctx.Err(); cerr != nil {
			cause := context.Cause(ctx)
			if errors.Is(err, cerr) || errors.Is(err, cause) {
				return Exit{kind: KindInterrupted, err: cause}
			}
		}
	}
	return Exit{kind: KindFailure, err: err}
}
