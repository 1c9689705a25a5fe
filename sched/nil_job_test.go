package sched_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jobkit/jobkit/sched"
)

// "A Job the scheduler did not make (a handler's unit test's, the zero
// Job) has no run: Progress and Heartbeat return ErrStale." A nil *Job is
// one too (a handler's unit test that passes nil), and bad input never
// panics: as a nil *Queue or *Inspector, it returns an error.
func TestNilJobIsStale(t *testing.T) {
	var j *sched.Job[int, int]
	for name, f := range map[string]func() error{
		"Heartbeat": func() error { return j.Heartbeat(context.Background()) },
		"Progress":  func() error { return j.Progress(context.Background(), sched.Progress{}) },
	} {
		func() {
			defer func() {
				if v := recover(); v != nil {
					t.Errorf("%s of a nil *Job panicked: %v", name, v)
				}
			}()
			if err := f(); !errors.Is(err, sched.ErrStale) {
				t.Errorf("%s of a nil *Job = %v, want ErrStale", name, err)
			}
		}()
	}
}
