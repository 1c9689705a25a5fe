package recovery_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/jobkit/jobkit/recovery"
	"github.com/jobkit/jobkit/sched"
)

// Look with a nil context does nothing and logs an error. Before, Reap
// refused the nil context and Look then called its Err method, a nil
// dereference.
func TestLookWithANilContextIsLogged(t *testing.T) {
	t.Parallel()
	s, err := sched.New(sched.Config{Workers: 1, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	r, err := recovery.New(s, recovery.Config{Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1012 a nil context is the point
	r.Look(nil)
	if out := buf.String(); !strings.Contains(out, "level=ERROR") || !strings.Contains(out, "nil context") {
		t.Errorf("logged %q, want an error about the nil context", out)
	}
}
