package sched_test

import (
	"testing"

	"github.com/jobkit/jobkit/sched"
)

// The outcome errors' Error and Unwrap work on a nil receiver and on one
// built by hand without the error inside, as a Logger or a user's errors.Is
// calls them. (From mutation testing: kills dropping CancelError.Error's nil-receiver
// check, which classification never reaches: errors.As finds a nil
// *CancelError without calling Error.)
func TestOutcomeErrorsOfANilReceiver(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		err  interface{ Error() string }
		want string
	}{
		"nil *CancelError":    {(*sched.CancelError)(nil), "cancelled"},
		"CancelError{}":       {&sched.CancelError{}, "cancelled"},
		"nil *PermanentError": {(*sched.PermanentError)(nil), "permanent: permanent failure"},
		"PermanentError{}":    {&sched.PermanentError{}, "permanent: permanent failure"},
		"nil *RerunError":     {(*sched.RerunError)(nil), "rerun: rerun"},
		"RerunError{}":        {&sched.RerunError{}, "rerun: rerun"},
		"nil *SnoozeError":    {(*sched.SnoozeError)(nil), "snooze 0s"},
	} {
		func() {
			defer func() {
				if v := recover(); v != nil {
					t.Errorf("%s: Error panicked: %v", name, v)
				}
			}()
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("%s: Error() = %q, want %q", name, got, tc.want)
			}
			if u, ok := tc.err.(interface{ Unwrap() error }); ok && u.Unwrap() != nil {
				t.Errorf("%s: Unwrap() = %v, want nil", name, u.Unwrap())
			}
		}()
	}
}
