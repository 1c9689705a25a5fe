package governor_test

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/jobkit/jobkit/governor"
	"github.com/jobkit/jobkit/internal/testkit"
)

// "A panic is recovered and logged with its stack (Config.Logger); sampling
// goes on": also a panic whose value cannot be formatted. (The Governor
// formatted it with fmt.Sprint on the sampling goroutine, which panicked
// again; the goroutine's way out took that for a bug of the Governor's own
// and panicked on, and the process died.) The scenario runs in a child
// process, which must exit cleanly.
func TestSamplerPanicWithAnUnprintableValueDoesNotCrashTheProcess(t *testing.T) {
	if !testkit.InChild(t) {
		return
	}
	var calls atomic.Int32
	g, err := governor.New(governor.Config{
		Slots:  1,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Sampler: governor.SamplerFunc(func(context.Context) (governor.Reading, error) {
			if calls.Add(1) == 1 {
				panic(testkit.Stubborn{})
			}
			return governor.Reading{CPUCores: 1}, nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_ = g.Start(ctx) // the first sample panics: Start returns, the reading stale
	if s := g.Snapshot(); !s.Stale {
		t.Error("want a stale reading after a panicking first sample")
	}
	if s := g.Snapshot().String(); s == "" {
		t.Error("empty Snapshot string")
	}
	if err := g.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}
