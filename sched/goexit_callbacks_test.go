package sched_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// A retry policy whose Delay ends its goroutine (runtime.Goexit) strands
// nothing: the entry fails, saying why, the worker is replaced, the other
// jobs run and Stop returns.
func TestGoexitInDelayFailsTheEntry(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 1})
		var runs atomic.Int64
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				runs.Add(1)
				if j.Payload == 1 {
					return errors.New("fails")
				}
				return nil
			},
			Retention: &sched.Retention{Failed: time.Hour, MaxFailed: 10, Succeeded: time.Hour, MaxSucceeded: 10},
			Retry: &sched.RetryPolicy{MaxRetries: 3, Delay: func(int, error) time.Duration {
				runtime.Goexit()
				return 0
			}},
		})
		id := must.Add(t, q, 1)
		must.Add(t, q, 2)
		synctest.Wait()
		e, err := q.Get(context.Background(), id)
		if err != nil || e.State != sched.StateFailed || runs.Load() != 2 || len(e.Errors) == 0 || !strings.Contains(e.Errors[0].Message, "Delay") {
			t.Errorf("entry %+v, %v after %d runs; want failed, saying the Delay failed, and the other run", e, err, runs.Load())
		}
		if c := must.Counts(t, q); c.Live() != 0 {
			t.Errorf("counts %+v, want nothing live", c)
		}
	})
}

// goexiting is a metrics provider whose metric named which ends its
// goroutine (runtime.Goexit) once armed.
type goexiting struct {
	which string
	armed atomic.Bool
	exits atomic.Int64
}

func (g *goexiting) metric(name string) *goexitMetric { return &goexitMetric{g, name} }

func (g *goexiting) NewDepthMetric(string) sched.GaugeMetric            { return g.metric("depth") }
func (g *goexiting) NewAddsMetric(string) sched.CounterMetric           { return g.metric("adds") }
func (g *goexiting) NewLatencyMetric(string) sched.HistogramMetric      { return g.metric("latency") }
func (g *goexiting) NewWorkDurationMetric(string) sched.HistogramMetric { return g.metric("duration") }
func (g *goexiting) NewUnfinishedWorkSecondsMetric(string) sched.SettableGaugeMetric {
	return g.metric("unfinished")
}
func (g *goexiting) NewLongestRunningProcessorSecondsMetric(string) sched.SettableGaugeMetric {
	return g.metric("longest")
}
func (g *goexiting) NewRetriesMetric(string) sched.CounterMetric { return g.metric("retries") }

type goexitMetric struct {
	g    *goexiting
	name string
}

func (m *goexitMetric) hit() {
	if m.name == m.g.which && m.g.armed.Load() {
		m.g.exits.Add(1)
		runtime.Goexit()
	}
}
func (m *goexitMetric) Inc()            { m.hit() }
func (m *goexitMetric) Dec()            { m.hit() }
func (m *goexitMetric) Set(float64)     { m.hit() }
func (m *goexitMetric) Observe(float64) { m.hit() }

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
				p := &goexiting{which: which}
				s := newScheduler(t, sched.Config{Workers: 2, Metrics: p, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
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
					// the entry is stored.
					go q.Add(context.Background(), i)
				}
				time.Sleep(time.Minute)
				synctest.Wait()
				if c := must.Counts(t, q); runs.Load() != 21 || c.Live() != 0 || p.exits.Load() != 1 {
					t.Errorf("%d runs after %d exits, counts %+v; want 21 runs after one exit and nothing live", runs.Load(), p.exits.Load(), c)
				}
			})
		})
	}
}
