package governor_test

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/governor"
	"github.com/jobkit/jobkit/internal/testkit"
)

// logRecorder is a slog.Handler that keeps the records it is given.
type logRecorder struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (h *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *logRecorder) WithGroup(string) slog.Handler            { return h }

func (h *logRecorder) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r.Clone())
	return nil
}

// find returns the first record at level whose message contains msg, and
// its attributes as strings.
func (h *logRecorder) find(level slog.Level, msg string) (attrs map[string]string, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.records {
		if r.Level == level && strings.Contains(r.Message, msg) {
			attrs = map[string]string{}
			r.Attrs(func(a slog.Attr) bool {
				attrs[a.Key] = a.Value.String()
				return true
			})
			return attrs, true
		}
	}
	return nil, false
}

var errBoom = errors.New("boom")

// TestSamplerPanic checks that a Sampler that panics, or calls
// runtime.Goexit, on its first or a later call is a failed sample: the last
// good reading is kept and marked stale, the panic is logged with its stack
// and reported in Snapshot.Err, and sampling goes on.
func TestSamplerPanic(t *testing.T) {
	t.Parallel()
	misbehave := map[string]func(){
		"panic string": func() { panic("sampler bug") },
		"panic error":  func() { panic(errBoom) },
		"panic nil":    func() { panic(testkit.NilValue()) },
		"Goexit":       runtime.Goexit,
	}
	for name, f := range misbehave {
		for _, on := range []int32{1, 2} {
			t.Run(name+"/call "+string('0'+rune(on)), func(t *testing.T) {
				t.Parallel()
				synctest.Test(t, func(t *testing.T) { testSamplerPanic(t, name, f, on) })
			})
		}
	}
}

func testSamplerPanic(t *testing.T, name string, misbehave func(), on int32) {
	var calls atomic.Int32
	sampler := governor.SamplerFunc(func(ctx context.Context) (governor.Reading, error) {
		n := calls.Add(1)
		if n == on {
			misbehave()
		}
		return reading(float64(80+n), 100), nil // over the CPU limit from the second call on
	})
	rec := &logRecorder{}
	g, err := governor.New(governor.Config{Sampler: sampler, Interval: interval, Logger: slog.New(rec)})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer g.Stop(context.Background())
	if on == 2 {
		time.Sleep(interval)
		synctest.Wait()
	}
	s := g.Snapshot()
	wantCPU := 81.0
	if on == 1 {
		wantCPU = 0 // no good reading yet
	}
	if !s.Stale || s.CPUPercent != wantCPU {
		t.Errorf("Snapshot after the sampler's %s = %+v; want stale with the last good reading", name, s)
	}
	if !tryAcquire(g) {
		t.Error("StaleAdmit refused after a failed sample")
	}
	var pe *governor.PanicError
	switch {
	case name == "Goexit":
		if !errors.Is(s.Err, governor.ErrSamplerGoexit) {
			t.Errorf("Snapshot.Err = %v, want ErrSamplerGoexit", s.Err)
		}
		if _, ok := rec.find(slog.LevelError, "Goexit"); !ok {
			t.Error("Goexit not logged")
		}
	case !errors.As(s.Err, &pe):
		t.Errorf("Snapshot.Err = %v, want a *PanicError", s.Err)
	default:
		if !strings.Contains(string(pe.Stack), "testSamplerPanic") {
			t.Errorf("PanicError.Stack does not show the sampler:\n%s", pe.Stack)
		}
		if name == "panic error" && !errors.Is(s.Err, errBoom) {
			t.Errorf("Snapshot.Err = %v does not unwrap to the panic's error", s.Err)
		}
		attrs, ok := rec.find(slog.LevelError, "panicked")
		if !ok || !strings.Contains(attrs["stack"], "testSamplerPanic") || attrs["panic"] == "" {
			t.Errorf("panic logged as %v, %v; want the value and a stack", attrs, ok)
		}
	}
	// Sampling goes on.
	time.Sleep(interval)
	synctest.Wait()
	if s := g.Snapshot(); s.Stale || s.Err != nil || s.CPUPercent != float64(80+on+1) {
		t.Errorf("Snapshot after a good sample = %+v, want it fresh", s)
	}
}

// TestHungSampler checks that a reading goes stale once no sample has
// returned for two intervals, whatever the Sampler is doing, that the stale
// policy then applies, and that the Sampler is not called again until it
// returns.
func TestHungSampler(t *testing.T) {
	t.Parallel()
	for _, policy := range []governor.StalePolicy{governor.StaleAdmit, governor.StaleRefuse} {
		t.Run(policy.String(), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				unblock := make(chan struct{})
				var calls atomic.Int32
				sampler := governor.SamplerFunc(func(ctx context.Context) (governor.Reading, error) {
					if calls.Add(1) == 2 {
						<-unblock // hangs, ignoring its context
						return reading(10, 100), nil
					}
					return reading(90, 100), nil // over the CPU limit
				})
				rec := &logRecorder{}
				g, err := governor.New(governor.Config{Sampler: sampler, Interval: interval, StalePolicy: policy, Slots: 1, Logger: slog.New(rec)})
				if err != nil {
					t.Fatal(err)
				}
				if err := g.Start(t.Context()); err != nil {
					t.Fatal(err)
				}
				defer g.Stop(context.Background())

				time.Sleep(2*interval - 1) // the second sample hangs from 1s on
				synctest.Wait()
				if s := g.Snapshot(); s.Stale || tryAcquire(g) {
					t.Fatalf("Snapshot at 2s less 1ns = %+v; want fresh and refusing (CPU over)", s)
				}
				time.Sleep(time.Nanosecond)
				synctest.Wait()
				s := g.Snapshot()
				if !s.Stale || !errors.Is(s.Err, governor.ErrSamplerLate) || s.CPUPercent != 90 {
					t.Errorf("Snapshot two intervals after the last sample = %+v; want stale with ErrSamplerLate", s)
				}
				if _, ok := rec.find(slog.LevelWarn, "late"); !ok {
					t.Error("late sampler not logged")
				}
				if got, want := tryAcquire(g), policy == governor.StaleAdmit; got != want {
					t.Errorf("TryAcquire with a hung sampler = %v, want %v", got, want)
				}
				waiting := acquireAsync(t.Context(), g, governor.Weight{})
				time.Sleep(98 * interval)
				synctest.Wait()
				if s := g.Snapshot(); !s.Stale || s.Age != 100*interval {
					t.Errorf("Snapshot after 100 intervals = %+v, want stale, 100s old", s)
				}
				if n := calls.Load(); n != 2 {
					t.Errorf("Sampler called %d times while one call hung, want 2", n)
				}
				if got, want := blocked(waiting), policy == governor.StaleRefuse; got != want {
					t.Errorf("Acquire blocked = %v, want %v", got, want)
				}
				close(unblock)
				synctest.Wait()
				if s := g.Snapshot(); s.Stale || s.Err != nil || s.CPUPercent != 10 || s.Age != 0 {
					t.Errorf("Snapshot after the sampler returned = %+v, want fresh", s)
				}
				r := <-waiting
				if r.err != nil {
					t.Fatal(r.err)
				}
				r.p.Release()
			})
		})
	}
}

// TestSlowSampler checks that a Sampler that always takes two and a half
// intervals leaves the reading stale from two intervals after each sample
// until the next returns.
func TestSlowSampler(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var calls atomic.Int32
		sampler := governor.SamplerFunc(func(ctx context.Context) (governor.Reading, error) {
			if calls.Add(1) > 1 {
				time.Sleep(5 * interval / 2)
			}
			return reading(10, 100), nil
		})
		g, err := governor.New(governor.Config{Sampler: sampler, Interval: interval, StalePolicy: governor.StaleRefuse})
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		defer g.Stop(context.Background())
		// Samples start at 0s, 1s, 4s, 7s (on the first tick after the
		// previous returned) and return at 0s, 3.5s, 6.5s, 9.5s.
		for _, step := range []struct {
			at    float64 // intervals since Start
			stale bool
		}{{1.5, false}, {2.5, true}, {3.75, false}, {5, false}, {6, true}, {7, false}, {9, true}, {9.75, false}} {
			time.Sleep(time.Until(start.Add(time.Duration(step.at * float64(interval)))))
			synctest.Wait()
			if s := g.Snapshot(); s.Stale != step.stale || tryAcquire(g) == step.stale {
				t.Errorf("at %v intervals: Snapshot = %v; want stale %v", step.at, s, step.stale)
			}
		}
	})
}

// panickingHandler is a slog.Handler that panics.
type panickingHandler struct{ logRecorder }

func (h *panickingHandler) Handle(context.Context, slog.Record) error { panic("logger bug") }

// TestLoggerPanics checks that a Logger whose handler panics does not stop
// sampling.
func TestLoggerPanics(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		sampler := governor.SamplerFunc(func(ctx context.Context) (governor.Reading, error) {
			if calls.Add(1) == 2 {
				panic("sampler bug")
			}
			return reading(10, 100), nil
		})
		g, err := governor.New(governor.Config{Sampler: sampler, Interval: interval, Logger: slog.New(&panickingHandler{})})
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		defer g.Stop(context.Background())
		time.Sleep(interval)
		synctest.Wait()
		if s := g.Snapshot(); !s.Stale {
			t.Errorf("Snapshot after a panicking sample = %v, want stale", s)
		}
		time.Sleep(interval)
		synctest.Wait()
		if s := g.Snapshot(); s.Stale || calls.Load() != 3 {
			t.Errorf("Snapshot after a good sample = %v (%d samples), want fresh", s, calls.Load())
		}
	})
}
