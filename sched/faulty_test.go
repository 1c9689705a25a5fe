package sched_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/internal/testkit"
	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
	"github.com/jobkit/jobkit/scope"
)

// faulty is a backend that panics in its first Takes and Promotes.
type faulty struct {
	sched.Backend[int, int]
	takes, promotes atomic.Int64
}

func (f *faulty) Take(ctx context.Context, s *scope.Scope, r sched.TakeRequest, dst []sched.Claim[int, int]) ([]sched.Claim[int, int], error) {
	if f.takes.Add(1) <= 2 {
		panic("backend bug in Take")
	}
	return f.Backend.Take(ctx, s, r, dst)
}

func (f *faulty) Promote(ctx context.Context, now time.Time) (time.Time, bool, error) {
	if f.promotes.Add(1) <= 2 {
		panic("backend bug in Promote")
	}
	return f.Backend.Promote(ctx, now)
}

// A backend that panics in a loop's take or the timekeeper's promotion does
// not end the process: the panic is logged, the queue is skipped for a
// second, and its jobs run afterwards.
func TestPanickingBackendIsContained(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 2, Logger: quiet})
		var runs atomic.Int64
		b := &faulty{Backend: sched.NewMemory[int, int]()}
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Backend: b, Handler: func(context.Context, *sched.Job[int, int]) error {
			runs.Add(1)
			return nil
		}})
		must.Add(t, q, 1)
		must.Add(t, q, 2, sched.After(time.Second))
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if runs.Load() != 2 || b.takes.Load() < 3 || b.promotes.Load() < 3 {
			t.Errorf("%d runs after %d takes and %d promotions, want both jobs run once the backend recovers", runs.Load(), b.takes.Load(), b.promotes.Load())
		}
	})
}

// panicky is a metrics provider whose metrics panic once armed (or call
// fault instead, if it is set; only the metric named which, if it is
// set), and whose constructors panic or return nil if told to.
type panicky struct {
	armed   atomic.Bool
	newMode string // "panic", "panic nil" or "nil" makes NewAddsMetric panic, panic with nil or return nil
	which   string // "adds", "latency", "duration", "unfinished", …
	fault   func()
	calls   atomic.Int64
	faults  atomic.Int64
}

func (p *panicky) metric(name string) *panickyMetric { return &panickyMetric{p, name} }

func (p *panicky) NewDepthMetric(string) sched.GaugeMetric { return p.metric("depth") }
func (p *panicky) NewAddsMetric(string) sched.CounterMetric {
	switch p.newMode {
	case "panic":
		panic("provider bug")
	case "panic nil":
		panic(testkit.NilValue())
	case "nil":
		return nil
	}
	return p.metric("adds")
}
func (p *panicky) NewLatencyMetric(string) sched.HistogramMetric { return p.metric("latency") }
func (p *panicky) NewWorkDurationMetric(string) sched.HistogramMetric {
	return p.metric("duration")
}
func (p *panicky) NewUnfinishedWorkSecondsMetric(string) sched.SettableGaugeMetric {
	return p.metric("unfinished")
}
func (p *panicky) NewLongestRunningProcessorSecondsMetric(string) sched.SettableGaugeMetric {
	return p.metric("longest")
}
func (p *panicky) NewRetriesMetric(string) sched.CounterMetric { return p.metric("retries") }

type panickyMetric struct {
	p    *panicky
	name string
}

func (m *panickyMetric) hit() {
	m.p.calls.Add(1)
	if !m.p.armed.Load() || (m.p.which != "" && m.name != m.p.which) {
		return
	}
	m.p.faults.Add(1)
	if m.p.fault != nil {
		m.p.fault()
	}
	panic("metric bug")
}
func (m *panickyMetric) Inc()            { m.hit() }
func (m *panickyMetric) Dec()            { m.hit() }
func (m *panickyMetric) Set(float64)     { m.hit() }
func (m *panickyMetric) Observe(float64) { m.hit() }

// A metrics provider that panics or returns a nil metric fails NewQueue
// with ErrInvalid; metrics that panic later switch the queue's metrics off
// and the jobs still run: no worker, loop or Add is taken down.
func TestPanickingMetricsAreContained(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"panic", "nil"} {
		s := newScheduler(t, sched.Config{Workers: 1, Metrics: &panicky{newMode: mode}, Logger: quiet})
		_, err := sched.NewQueue(s, "q", sched.QueueConfig[int, int]{Handler: func(context.Context, *sched.Job[int, int]) error { return nil }})
		if !errors.Is(err, sched.ErrInvalid) {
			t.Errorf("NewQueue with a provider that returns %s: %v, want ErrInvalid", mode, err)
		}
	}
	p := &panicky{}
	s := newScheduler(t, sched.Config{Workers: 2, Metrics: p, Logger: quiet})
	done := make(chan int, 64)
	q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Handler: func(_ context.Context, j *sched.Job[int, int]) error {
		done <- j.Payload
		return nil
	}})
	must.Add(t, q, 0)
	<-done
	p.armed.Store(true)
	for i := 1; i <= 20; i++ {
		must.Add(t, q, i)
	}
	for range 20 {
		<-done
	}
	if c := must.Counts(t, q); c.Added != 21 {
		t.Errorf("counts %+v, want 21 added", c)
	}
}

// A metric that ends its goroutine (runtime.Goexit) takes nothing down,
// whichever goroutine calls it: an Add (after the entry is stored), a
// worker as a batch starts or a run ends, or the gauges' loop. The queue's
// metrics go off, every job runs once, nothing stays claimed, and Stop
// returns with no goroutine left behind (goleak, in TestMain).
func TestGoexitInMetricsIsContained(t *testing.T) {
	t.Parallel()
	for _, which := range []string{"adds", "latency", "duration", "unfinished"} {
		t.Run(which, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := &panicky{which: which, fault: runtime.Goexit}
				s := newScheduler(t, sched.Config{Workers: 2, Metrics: p, Logger: quiet})
				var runs atomic.Int64
				q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Handler: func(_ context.Context, j *sched.Job[int, int]) error {
					runs.Add(1)
					time.Sleep(time.Second) // a run in progress for the gauges' loop to see
					return nil
				}})
				must.Add(t, q, 0)
				synctest.Wait()
				p.armed.Store(true)
				for i := 1; i <= 20; i++ {
					// The adds metric ends the goroutine of the Add: after
					// the entry is stored. One Add at a time: two at once
					// may both call the metric before it is switched off
					// (the test failed so about twice in a hundred runs).
					go q.Add(context.Background(), i)
					synctest.Wait()
				}
				time.Sleep(time.Minute)
				synctest.Wait()
				// One exit, or two: the two workers may each call the
				// metric before it is switched off (the test failed so
				// about once in two hundred runs).
				if c, f := must.Counts(t, q), p.faults.Load(); runs.Load() != 21 || c.Live() != 0 || f < 1 || f > 2 {
					t.Errorf("%d runs after %d exits, counts %+v; want 21 runs after one or two exits and nothing live", runs.Load(), f, c)
				}
			})
		})
	}
}

// faultyRuns is a backend whose method in calls fault: the first Start
// or Take, before it is passed on; the first take's finalizer, which Take
// registers on the batch's scope ("finalizer"); every Settle, after it was
// passed on; every Promote ("Promote always"); and, if upTo is set, the
// calls of in up to that many.
type faultyRuns struct {
	sched.Backend[int, int]
	in     string
	fault  func()
	upTo   int64 // if not 0, the calls in in fault up to this many
	faults atomic.Int64
}

func (f *faultyRuns) hit(in string) {
	if in != f.in {
		return
	}
	if n := f.faults.Add(1); n == 1 || n <= f.upTo || in == "Settle" || in == "Promote always" {
		f.fault()
	}
}

func (f *faultyRuns) Take(ctx context.Context, s *scope.Scope, r sched.TakeRequest, dst []sched.Claim[int, int]) ([]sched.Claim[int, int], error) {
	f.hit("Take")
	if f.in == "finalizer" {
		s.TryAdd(scope.FinalizerFunc(func(scope.Exit) error { f.hit("finalizer"); return nil }))
	}
	return f.Backend.Take(ctx, s, r, dst)
}

func (f *faultyRuns) Promote(ctx context.Context, now time.Time) (time.Time, bool, error) {
	f.hit("Promote always")
	return f.Backend.Promote(ctx, now)
}

func (f *faultyRuns) Start(ctx context.Context, c *sched.Claim[int, int], now, lease time.Time) error {
	f.hit("Start")
	return f.Backend.Start(ctx, c, now, lease)
}

func (f *faultyRuns) Settle(ctx context.Context, c *sched.Claim[int, int], o sched.Outcome) error {
	err := f.Backend.Settle(ctx, c, o)
	f.hit("Settle")
	return err
}

// A backend whose Take, Start, Settle or take finalizer panics, or ends
// the worker's or loop's goroutine (runtime.Goexit), takes neither the
// goroutine's work nor the process down: the run it failed goes back to
// pending when its batch's scope closes and runs again, every job runs to
// success, nothing stays live, no run is counted as ended twice, and Stop
// returns with no goroutine left. A Settle that always ends the goroutine
// does not strand the worker even after a handler ended it first (job 3).
func TestFaultyBackendRunsAreContained(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"Take", "Start", "Settle", "finalizer"} {
		for name, fault := range map[string]func(){"panic": func() { panic("backend bug in " + in) }, "Goexit": runtime.Goexit} {
			t.Run(in+"/"+name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
					b := &faultyRuns{Backend: sched.NewMemory[int, int](), in: in, fault: fault}
					ran, runs := make(map[int]int), 0
					q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Backend: b, Handler: func(_ context.Context, j *sched.Job[int, int]) error {
						ran[j.Payload]++ // one worker: one run at a time
						runs++
						if j.Payload == 3 && j.Attempt == 1 {
							runtime.Goexit()
						}
						return nil
					}})
					for i := range 5 {
						must.Add(t, q, i)
					}
					time.Sleep(time.Minute)
					synctest.Wait()
					c := must.Counts(t, q)
					if len(ran) != 5 || c.Live() != 0 || b.faults.Load() == 0 {
						t.Errorf("jobs run %v, counts %+v after %d faults; want all 5 run and nothing live", ran, c, b.faults.Load())
					}
					sum, err := s.Inspector().Summary(context.Background(), "q")
					if err != nil || sum.Ended > uint64(runs) {
						t.Errorf("%d runs ended of %d (%v), want none counted twice", sum.Ended, runs, err)
					}
				})
			})
		}
	}
}

// expiredPanics is a backend whose Expired panics.
type expiredPanics struct{ sched.Backend[int, int] }

func (expiredPanics) Expired(context.Context, time.Time, []sched.Claim[int, int]) ([]sched.Claim[int, int], error) {
	panic("backend bug in Expired")
}

// A backend that panics while Reap looks for lapsed leases makes Reap
// return an error, not panic in the reaper's goroutine.
func TestReapContainsABackendPanic(t *testing.T) {
	t.Parallel()
	s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
	must.Queue(t, s, "q", sched.QueueConfig[int, int]{Backend: expiredPanics{sched.NewMemory[int, int]()}, Handler: nop[int, int], Lease: time.Minute})
	_, err := s.Inspector().Reap(context.Background(), time.Now(), 0)
	if err == nil || !strings.Contains(err.Error(), "backend panicked") {
		t.Errorf("Reap = %v, want the backend's panic as an error", err)
	}
}

// A backend whose Promote always ends the timekeeper's goroutine
// (runtime.Goexit) does not make the timekeeper respawn in a tight loop or
// Stop hang: its queue is left alone for a second at a time, and Stop
// returns in time.
func TestABackendThatAlwaysEndsTheTimekeeperLetsStopReturn(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := must.New(t, sched.Config{Workers: 1, Logger: quiet})
		b := &faultyRuns{Backend: sched.NewMemory[int, int](), in: "Promote always", fault: runtime.Goexit}
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Backend: b, Handler: nop[int, int]})
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		must.Add(t, q, 1, sched.After(time.Second))
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := b.faults.Load(); n < 2 || n > 120 {
			t.Errorf("Promote was called %d times in a minute, want about once a second", n)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("Stop = %v", err)
		}
	})
}

// rescueSettleExits is a backend whose Settle of a rescued run ends the
// goroutine (runtime.Goexit) after it is passed on.
type rescueSettleExits struct {
	sched.Backend[int, int]
	exits atomic.Int64
}

func (b *rescueSettleExits) Settle(ctx context.Context, c *sched.Claim[int, int], o sched.Outcome) error {
	err := b.Backend.Settle(ctx, c, o)
	if o.Rescued {
		b.exits.Add(1)
		runtime.Goexit()
	}
	return err
}

// A backend whose Settle ends the reaper's goroutine as it rescues a hung
// run does not strand the rescued batch: its worker is still replaced,
// later jobs run, and Stop returns once the hung handler does.
func TestARescueWhoseSettleEndsTheGoroutineStrandsNothing(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := must.New(t, sched.Config{Workers: 1, Logger: quiet})
		s.Inspector().EnableRescue()
		gate := make(chan struct{})
		var runs atomic.Int64
		b := &rescueSettleExits{Backend: sched.NewMemory[int, int]()}
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Backend: b, Lease: time.Second, Handler: func(_ context.Context, j *sched.Job[int, int]) error {
			if runs.Add(1) == 1 {
				<-gate // hangs, ignoring its context, until the end
			}
			return nil
		}})
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		must.Add(t, q, 1)
		time.Sleep(5 * time.Second)
		synctest.Wait()
		reaped := make(chan struct{})
		go func() { // the reaper's goroutine, which the backend ends
			defer close(reaped)
			s.Inspector().Reap(context.Background(), time.Now(), 0)
		}()
		<-reaped
		for i := 2; i <= 4; i++ {
			must.Add(t, q, i)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if runs.Load() != 5 || b.exits.Load() != 1 {
			t.Errorf("%d runs after %d exits in a rescue, want 5 (the hung one, its rerun and 3 more) after 1", runs.Load(), b.exits.Load())
		}
		close(gate)
		if err := s.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
}
