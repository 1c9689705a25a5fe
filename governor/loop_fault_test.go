package governor_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/governor"
)

// faultyNow is a Config.NowFunc that a test arms while it sleeps, so that
// the calls it sees then are the sampling goroutine's: it lets skip calls
// through, then panics (or calls runtime.Goexit) on the next times calls, or
// on every call if times is negative.
type faultyNow struct {
	goexit bool

	mu                  sync.Mutex
	armed               bool
	skip, times, faults int
}

func (c *faultyNow) now() time.Time {
	c.mu.Lock()
	fault := c.armed && c.times != 0 && c.skip == 0
	switch {
	case c.armed && c.skip > 0:
		c.skip--
	case fault:
		c.faults++
		if c.times > 0 {
			c.times--
		}
	}
	c.mu.Unlock()
	if fault {
		if c.goexit {
			runtime.Goexit()
		}
		panic("clock bug")
	}
	return time.Now()
}

func (c *faultyNow) arm(skip, times int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armed, c.skip, c.times, c.faults = true, skip, times, 0
}

// disarm stops the faults and returns how many were made since arm.
func (c *faultyNow) disarm() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armed = false
	return c.faults
}

func faultName(goexit bool) string {
	if goexit {
		return "Goexit"
	}
	return "panic"
}

// goexitHandler is a slog.Handler that ends the goroutine logging
// (runtime.Goexit).
type goexitHandler struct{ logRecorder }

func (h *goexitHandler) Handle(context.Context, slog.Record) error {
	runtime.Goexit()
	return nil
}

// checkFaultLogged checks that rec has the record of a call on the sampling
// goroutine that faulted: with the panic's value and stack, or naming
// Goexit.
func checkFaultLogged(t *testing.T, rec *logRecorder, goexit bool) {
	t.Helper()
	attrs, ok := rec.find(slog.LevelError, "sampling goroutine")
	switch {
	case !ok:
		t.Error("the fault on the sampling goroutine was not logged")
	case goexit:
		if _, ok := rec.find(slog.LevelError, "sampling goroutine called runtime.Goexit"); !ok {
			t.Error("a Goexit on the sampling goroutine not logged as such")
		}
	case attrs["panic"] != "clock bug" || !strings.Contains(attrs["stack"], "faultyNow"):
		t.Errorf("the panic on the sampling goroutine logged as %v; want the value and a stack showing NowFunc", attrs)
	}
}

// TestNowFuncFaultOnSamplingGoroutine checks that a Config.NowFunc that
// panics, or calls runtime.Goexit, on the sampling goroutine (as a tick
// sweeps the usage accounts, or as a sample is applied) does not crash the
// process nor end sampling: the fault is logged, later samples are applied
// and admission follows them, and Stop returns with no goroutine left. The
// same with a Logger that ends every goroutine logging, the one logging the
// fault included.
func TestNowFuncFaultOnSamplingGoroutine(t *testing.T) {
	t.Parallel()
	for _, goexit := range []bool{false, true} {
		// In a tick, the sampling goroutine reads the clock to sweep, then to
		// apply the sample the tick started.
		for call, site := range []string{"sweep", "apply"} {
			for _, goexitLogger := range []bool{false, true} {
				logger := "records"
				if goexitLogger {
					logger = "Goexit"
				}
				t.Run(fmt.Sprintf("%s/%s/logger %s", faultName(goexit), site, logger), func(t *testing.T) {
					t.Parallel()
					synctest.Test(t, func(t *testing.T) {
						clock := &faultyNow{goexit: goexit}
						rec := &logRecorder{}
						var h slog.Handler = rec
						if goexitLogger {
							h = &goexitHandler{}
						}
						g, f := setup(t, governor.Config{NowFunc: clock.now, Logger: slog.New(h)}, reading(10, 100))
						clock.arm(call, 1)
						sample(f, reading(90, 100), nil)
						if n := clock.disarm(); n != 1 {
							t.Fatalf("NowFunc faulted %d times in a tick, want once", n)
						}
						if !goexitLogger {
							checkFaultLogged(t, rec, goexit)
						}
						for _, cpu := range []float64{95, 10} {
							sample(f, reading(cpu, 100), nil)
							s := g.Snapshot()
							if s.Stale || s.CPUPercent != cpu || s.Age != 0 || tryAcquire(g) != (cpu < 80) {
								t.Errorf("Snapshot after a sample of %v%% CPU = %v; want it fresh, and admission to follow", cpu, s)
							}
						}
					})
				})
			}
		}
	}
}

// TestNowFuncFaultOnFirstSample checks that a Config.NowFunc that panics, or
// calls runtime.Goexit, as the first sample is applied counts as a failed
// first sample: Start returns, the Governor has no reading, and the next
// sample is applied.
func TestNowFuncFaultOnFirstSample(t *testing.T) {
	t.Parallel()
	for _, goexit := range []bool{false, true} {
		t.Run(faultName(goexit), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				clock := &faultyNow{goexit: goexit}
				f := &fakeSampler{r: reading(90, 100)}
				rec := &logRecorder{}
				g, err := governor.New(governor.Config{Sampler: f, Interval: interval, NowFunc: clock.now, Logger: slog.New(rec)})
				if err != nil {
					t.Fatal(err)
				}
				clock.arm(0, 1)
				if err := g.Start(t.Context()); err != nil {
					t.Fatal(err)
				}
				defer func() {
					if err := g.Stop(context.Background()); err != nil {
						t.Error(err)
					}
				}()
				synctest.Wait()
				if n := clock.disarm(); n != 1 {
					t.Fatalf("NowFunc faulted %d times, want once", n)
				}
				if s := g.Snapshot(); !s.Stale || !s.SampledAt.IsZero() {
					t.Errorf("Snapshot after the first sample faulted = %v; want stale, no reading", s)
				}
				checkFaultLogged(t, rec, goexit)
				sample(f, reading(95, 100), nil)
				if s := g.Snapshot(); s.Stale || s.CPUPercent != 95 || s.Age != 0 || tryAcquire(g) {
					t.Errorf("Snapshot after the next sample = %v; want it fresh and refusing", s)
				}
			})
		})
	}
}

// TestNowFuncFaultMarkingLate checks that a Config.NowFunc that panics, or
// calls runtime.Goexit, as a hung Sampler's reading is marked late does not
// end sampling: the reading is marked late an Interval on, and the sample
// is applied once the Sampler returns.
func TestNowFuncFaultMarkingLate(t *testing.T) {
	t.Parallel()
	for _, goexit := range []bool{false, true} {
		t.Run(faultName(goexit), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				at := func(intervals float64) {
					time.Sleep(time.Until(start.Add(time.Duration(intervals * float64(interval)))))
					synctest.Wait()
				}
				unblock := make(chan struct{})
				defer close(unblock) // before Stop, which waits for the Sampler
				var calls atomic.Int32
				sampler := governor.SamplerFunc(func(ctx context.Context) (governor.Reading, error) {
					switch calls.Add(1) {
					case 1:
					case 2:
						time.Sleep(interval / 2) // so that lateness falls between two ticks
					default:
						<-unblock
						return reading(20, 100), nil
					}
					return reading(10, 100), nil
				})
				clock := &faultyNow{goexit: goexit}
				rec := &logRecorder{}
				g, err := governor.New(governor.Config{Sampler: sampler, Interval: interval, NowFunc: clock.now, Logger: slog.New(rec)})
				if err != nil {
					t.Fatal(err)
				}
				if err := g.Start(t.Context()); err != nil {
					t.Fatal(err)
				}
				defer g.Stop(context.Background())

				// Samples start at 0, 1 and 2 intervals and return at 0 and
				// 1.5; the third hangs: the reading is late at 3.5.
				at(3.25)
				clock.arm(0, 1)
				at(3.75)
				if n := clock.disarm(); n != 1 {
					t.Fatalf("NowFunc faulted %d times marking the reading late, want once", n)
				}
				checkFaultLogged(t, rec, goexit)
				at(4.75)
				if s := g.Snapshot(); !s.Stale || !errors.Is(s.Err, governor.ErrSamplerLate) {
					t.Errorf("Snapshot an Interval after marking it late faulted = %v; want stale with ErrSamplerLate", s)
				}
				unblock <- struct{}{}
				synctest.Wait()
				if s := g.Snapshot(); s.Stale || s.CPUPercent != 20 || s.Age != 0 {
					t.Errorf("Snapshot after the Sampler returned = %v; want it fresh", s)
				}
			})
		})
	}
}

// TestNowFuncAlwaysFaultingOnSamplingGoroutine checks that a Config.NowFunc
// that panics, or calls runtime.Goexit, on every call of the sampling
// goroutine costs no more than one fault (and one record) per Interval,
// plus one, while the goroutine keeps sampling; that sampling resumes when
// the faults stop; and that Stop returns while they go on.
func TestNowFuncAlwaysFaultingOnSamplingGoroutine(t *testing.T) {
	t.Parallel()
	for _, goexit := range []bool{false, true} {
		for _, then := range []string{"resume", "stop"} {
			t.Run(faultName(goexit)+"/"+then, func(t *testing.T) {
				t.Parallel()
				synctest.Test(t, func(t *testing.T) {
					clock := &faultyNow{goexit: goexit}
					rec := &logRecorder{}
					f := &fakeSampler{r: reading(10, 100)}
					g, err := governor.New(governor.Config{Sampler: f, Interval: interval, NowFunc: clock.now, Logger: slog.New(rec)})
					if err != nil {
						t.Fatal(err)
					}
					if err := g.Start(t.Context()); err != nil {
						t.Fatal(err)
					}
					const ticks = 10
					clock.arm(0, -1)
					f.set(reading(90, 100), nil)
					time.Sleep(ticks * interval)
					synctest.Wait()
					if then == "stop" {
						if err := g.Stop(context.Background()); err != nil {
							t.Error(err)
						}
						clock.disarm()
						return
					}
					defer g.Stop(context.Background())
					n := clock.disarm()
					if n < ticks || n > ticks+1 {
						t.Errorf("NowFunc faulted %d times in %d intervals; want one a tick, at most one more", n, ticks)
					}
					logged := 0
					rec.mu.Lock()
					for _, r := range rec.records {
						if strings.Contains(r.Message, "sampling goroutine") {
							logged++
						}
					}
					rec.mu.Unlock()
					if logged != n {
						t.Errorf("%d faults logged, want %d", logged, n)
					}
					if c := f.count(); c < ticks/2 {
						t.Errorf("Sampler called %d times in %d intervals of faults; want sampling to go on", c, ticks)
					}
					sample(f, reading(95, 100), nil)
					if s := g.Snapshot(); s.Stale || s.CPUPercent != 95 || s.Age != 0 || tryAcquire(g) {
						t.Errorf("Snapshot once the faults stopped = %v; want it fresh and refusing", s)
					}
				})
			})
		}
	}
}

// TestLoggerGoexit checks that a Logger whose handler ends the goroutine
// logging (runtime.Goexit) does not stop sampling.
func TestLoggerGoexit(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g, f := setup(t, governor.Config{Logger: slog.New(&goexitHandler{})}, reading(10, 100))
		sample(f, governor.Reading{}, errBoom) // logged
		if s := g.Snapshot(); !s.Stale || !errors.Is(s.Err, errBoom) {
			t.Errorf("Snapshot after a failed sample = %v, want stale", s)
		}
		for _, cpu := range []float64{90, 10} { // the first logged as a recovery
			sample(f, reading(cpu, 100), nil)
			if s := g.Snapshot(); s.Stale || s.CPUPercent != cpu || s.Age != 0 || tryAcquire(g) != (cpu < 80) {
				t.Errorf("Snapshot after a sample of %v%% CPU = %v; want it fresh, and admission to follow", cpu, s)
			}
		}
	})
}
