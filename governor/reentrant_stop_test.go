package governor_test

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/governor"
)

// stopHandler is a slog handler that calls stop for every record.
type stopHandler struct{ stop func() }

func (stopHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h stopHandler) Handle(context.Context, slog.Record) error {
	h.stop()
	return nil
}
func (h stopHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h stopHandler) WithGroup(string) slog.Handler      { return h }

// Stop called back from the Governor's sampling goroutine, by the Sampler,
// by NowFunc or by the Logger's handler, returns instead of waiting for the
// goroutine that waits for it: it used to wait until its context ended
// (for good with context.Background), and returned the context's error,
// with sampling stuck meanwhile. Each Stop here gives up after a minute of
// the bubble's time, so that one that waits for itself fails the test.
func TestStopFromTheSamplingGoroutine(t *testing.T) {
	t.Parallel()
	for _, from := range []string{"Sampler", "NowFunc", "Logger"} {
		t.Run(from, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var (
					g       atomic.Pointer[governor.Governor]
					armed   atomic.Bool // set once Start has returned
					stopped = make(chan error, 1)
				)
				stop := func() {
					if !armed.Load() {
						return
					}
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					defer cancel()
					select {
					case stopped <- g.Load().Stop(ctx):
					default:
					}
				}
				cfg := governor.Config{Interval: interval}
				var failing atomic.Bool // the sample fails, to be logged
				switch from {
				case "Sampler":
					cfg.Logger = slog.New(slog.DiscardHandler)
				case "NowFunc":
					cfg.Logger = slog.New(slog.DiscardHandler)
					cfg.NowFunc = func() time.Time { stop(); return time.Now() }
				case "Logger":
					cfg.Logger = slog.New(stopHandler{stop})
					failing.Store(true)
				}
				cfg.Sampler = governor.SamplerFunc(func(context.Context) (governor.Reading, error) {
					if from == "Sampler" {
						stop()
					}
					if failing.Load() {
						return governor.Reading{}, errors.New("sample failed")
					}
					return reading(10, 100), nil
				})
				gv, err := governor.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				g.Store(gv)
				if err := gv.Start(context.Background()); err != nil {
					t.Fatal(err)
				}
				armed.Store(true)
				failing.Store(false) // the next sample recovers, which is logged
				if err := <-stopped; err != nil {
					t.Errorf("Stop from the %s = %v, want nil", from, err)
				}
				if err := gv.Stop(context.Background()); err != nil {
					t.Errorf("a later Stop = %v", err)
				}
			})
		})
	}
}
