package governor_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync/atomic"
	"testing"

	"github.com/jobkit/jobkit/governor"
)

// stubborn is a panic value whose String method panics with a stubborn:
// fmt recovers the first panic of a String method, but re-panics a nested
// one ("the recursion in printArg cannot succeed").
type stubborn struct{}

func (stubborn) String() string { panic(stubborn{}) }

// The package documentation: "A panic is recovered and logged with its
// stack (Config.Logger); sampling goes on." The Governor formats the panic
// value with fmt.Sprint on the sampling goroutine, outside any recover of
// its own; a value whose String method panics with such a value makes
// fmt.Sprint panic, run's way out takes that for a bug of the Governor's own
// and re-panics it, and the whole process dies. The scenario runs in a
// child process, which must exit cleanly.
func TestSamplerPanicWithAnUnprintableValueDoesNotCrashTheProcess(t *testing.T) {
	if os.Getenv("JOBKIT_PANICVALUE_CHILD") == "1" {
		panicValueChild()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSamplerPanicWithAnUnprintableValueDoesNotCrashTheProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "JOBKIT_PANICVALUE_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			if len(out) > 1500 {
				out = out[:1500]
			}
			t.Fatalf("the process died: %v\n%s", err, out)
		}
		t.Fatal(err)
	}
}

func panicValueChild() {
	var calls atomic.Int32
	g, err := governor.New(governor.Config{
		Slots:  1,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Sampler: governor.SamplerFunc(func(context.Context) (governor.Reading, error) {
			if calls.Add(1) == 1 {
				panic(stubborn{})
			}
			return governor.Reading{CPUCores: 1}, nil
		}),
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	_ = g.Start(ctx) // the first sample panics: Start returns, the reading stale
	if s := g.Snapshot(); !s.Stale {
		panic("want a stale reading after a panicking first sample")
	}
	if err := g.Stop(ctx); err != nil {
		panic(err)
	}
}
