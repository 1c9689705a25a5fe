package scope_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jobkit/jobkit/scope"
)

// Call classifies f's error as Run does, against ctx: an error caused by
// ctx's cancellation is an interruption carrying the cause.
func TestCallClassifiesCancellationAsInterruption(t *testing.T) {
	cause := errors.New("shutting down")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	for _, ret := range []error{ctx.Err(), fmt.Errorf("stopped: %w", ctx.Err()), cause} {
		exit, err := scope.Call(ctx, func(context.Context) error { return ret })
		if err != ret {
			t.Errorf("Call returned %v, want f's error %v", err, ret)
		}
		if exit.Kind() != scope.KindInterrupted || exit.Err() != cause {
			t.Errorf("Call(cancelled ctx) with f returning %v: Exit = %v, want interrupted: %v", ret, exit, cause)
		}
	}
	// Not caused by ctx: a failure.
	other := errors.New("other")
	if exit, _ := scope.Call(ctx, func(context.Context) error { return other }); exit.Kind() != scope.KindFailure {
		t.Errorf("Call with an unrelated error: Exit = %v, want failure", exit)
	}
}
