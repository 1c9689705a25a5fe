package governor_test

import (
	"context"
	"log/slog"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/governor"
)

// goexitStringer is a panic value whose String method ends the goroutine
// that formats it (runtime.Goexit), as a t.FailNow in a String method would.
type goexitStringer struct{}

func (goexitStringer) String() string {
	runtime.Goexit()
	return "unreachable"
}

// TestNowFuncPanicWithAValueWhoseStringCallsGoexit checks that the sampling
// goroutine survives a Config.NowFunc that panics with a value whose String
// method calls runtime.Goexit: the value was formatted for the log on the
// sampling goroutine, in the handler of the fault itself, so the Goexit
// ended sampling for good before a new run could take over (no sample was
// applied again, and Stop waited for a goroutine that was gone).
func TestNowFuncPanicWithAValueWhoseStringCallsGoexit(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var armed atomic.Bool
		now := func() time.Time {
			if armed.CompareAndSwap(true, false) {
				panic(goexitStringer{})
			}
			return time.Now()
		}
		f := &fakeSampler{r: reading(10, 100)}
		g, err := governor.New(governor.Config{Sampler: f, Interval: interval, NowFunc: now, Logger: slog.New(&logRecorder{})})
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		armed.Store(true) // the next call, on the sampling goroutine at the next tick
		sample(f, reading(90, 100), nil)
		for _, cpu := range []float64{95, 10} {
			sample(f, reading(cpu, 100), nil)
			if s := g.Snapshot(); s.Stale || s.CPUPercent != cpu || s.Age != 0 {
				t.Errorf("Snapshot after a sample of %v%% CPU = %v; want it applied", cpu, s)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*interval)
		defer cancel()
		if err := g.Stop(ctx); err != nil {
			t.Errorf("Stop = %v; want the sampling goroutine to have returned", err)
		}
	})
}
