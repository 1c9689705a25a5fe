package sched_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// A gauge metric that hangs as the metrics loop sets it, with a handler
// hung too: StopAndCancel abandons the run and returns when its context
// ends. (Real time: see TestAHangingDelayLetsStopAndCancelReturn.)
func TestAHangingGaugeLetsStopAndCancelReturn(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	p := &panicky{which: "unfinished", fault: func() {
		close(entered)
		<-release
	}}
	s := must.New(t, sched.Config{Workers: 1, Metrics: p, Logger: quiet})
	hung := make(chan struct{})
	q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
		Handler: func(context.Context, *sched.Job[int, int]) error {
			close(hung)
			<-release // ignores ctx
			return nil
		},
	})
	must.Add(t, q, 1)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-hung
	p.armed.Store(true)
	<-entered
	if err := stopAndCancelSoon(t, s); !errors.Is(err, sched.ErrAbandoned) {
		t.Errorf("StopAndCancel = %v, want ErrAbandoned", err)
	}
}

// counters is a MetricsProvider that counts the Inc calls of its counters
// and keeps its histograms' observations (gauges), by metric name.
type counters struct {
	*gauges
	mu  sync.Mutex
	inc map[string]int
}

func newCounters() *counters { return &counters{gauges: newGauges(), inc: make(map[string]int)} }

type counter struct {
	c    *counters
	name string
}

func (m counter) Inc() { m.c.mu.Lock(); m.c.inc[m.name]++; m.c.mu.Unlock() }

func (c *counters) count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.inc[name]
}

func (c *counters) NewAddsMetric(string) sched.CounterMetric    { return counter{c, "adds"} }
func (c *counters) NewRetriesMetric(string) sched.CounterMetric { return counter{c, "retries"} }

// A run whose claim another process's reaper rescued (its lease lapsed:
// on a shared backend) ends with its result ignored, the backend's Settle
// stale: as a run abandoned by a rescue in this process, it is not
// observed and its failure is no retry, for the entry runs again at once.
// Before, its work duration was observed and a retry counted that the
// backend never scheduled.
func TestARunRescuedElsewhereIsNotObserved(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		c := newCounters()
		s := newScheduler(t, sched.Config{Workers: 1, Metrics: c, Logger: quiet})
		mem := sched.NewMemory[int, int]()
		started, release := make(chan struct{}), make(chan struct{})
		var runs atomic.Int64
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Backend: mem, Lease: time.Second,
			Retry: &sched.RetryPolicy{MaxRetries: 3, Base: time.Hour},
			Handler: func(context.Context, *sched.Job[int, int]) error {
				if runs.Add(1) == 1 {
					close(started)
					<-release
					return errors.New("fails")
				}
				return nil
			},
		})
		must.Add(t, q, 1)
		<-started
		time.Sleep(2 * time.Second) // the lease lapsed
		now := time.Now()
		cs, err := mem.Expired(ctx, now, nil)
		if err != nil || len(cs) != 1 {
			t.Fatalf("Expired = %d claims, %v; want 1", len(cs), err)
		}
		// Another process's reaper rescues it, in the backend alone.
		if err := mem.Settle(ctx, &cs[0], sched.Outcome{Kind: sched.OutcomeRerun, Finished: now, Rescued: true, LapsedBefore: now}); err != nil {
			t.Fatalf("rescue: %v", err)
		}
		close(release)
		time.Sleep(time.Second)
		synctest.Wait()
		if cnt := must.Counts(t, q); runs.Load() != 2 || cnt.Succeeded != 1 {
			t.Fatalf("%d runs, counts %+v; want the rescued entry run again and succeeded", runs.Load(), cnt)
		}
		if r, d := c.count("retries"), c.observations("duration"); r != 0 || len(d) != 1 {
			t.Errorf("%d retries counted, work durations %v; want no retry and the one run that settled", r, d)
		}
	})
}

// A backend whose take finalizer ends the goroutine (runtime.Goexit) as a
// rescue abandons a running batch (Reap's goroutine here) leaves nothing
// behind: the abandoned run leaves the runs in progress, so that the
// unfinished-work and longest-running gauges fall back to 0 once the
// entry ran again, and its worker is handed over, so that Stop returns
// (and with one worker, the entry runs again at all).
func TestAGoexitInAFinalizerAsARescueAbandonsLeavesNothingBehind(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g := newGauges()
		s := must.New(t, sched.Config{Workers: 2, Metrics: g, Logger: quiet})
		b := &faultyRuns{Backend: sched.NewMemory[int, int](), in: "finalizer", fault: runtime.Goexit}
		release := make(chan struct{})
		var runs atomic.Int64
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Backend: b, Lease: time.Second, Handler: func(context.Context, *sched.Job[int, int]) error {
			if runs.Add(1) == 1 {
				<-release // ignores its context: rescued
			}
			return nil
		}})
		must.Add(t, q, 1)
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second) // the lease lapsed
		reaped := make(chan struct{})
		go func() { // the finalizer ends this goroutine
			defer close(reaped)
			_, _ = s.Inspector().Reap(context.Background(), time.Now(), 0)
		}()
		<-reaped
		close(release)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if c := must.Counts(t, q); runs.Load() != 2 || c.Succeeded != 1 {
			t.Fatalf("%d runs, counts %+v; want the rescued entry run again and succeeded", runs.Load(), c)
		}
		if u, l := g.get("unfinished"), g.get("longest"); u != 0 || l != 0 {
			t.Errorf("unfinished %vs, longest %vs once every run ended; want 0", u, l)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("Stop = %v", err)
		}
	})
}
