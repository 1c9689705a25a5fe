package sched_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

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
		s := newScheduler(t, sched.Config{Workers: 2, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
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

// panicky is a metrics provider whose metrics panic once armed, and whose
// constructors panic or return nil if told to.
type panicky struct {
	armed   atomic.Bool
	newMode string // "panic" or "nil" makes NewAddsMetric panic or return nil
	calls   atomic.Int64
}

func (p *panicky) metric() *panickyMetric { return &panickyMetric{p} }

func (p *panicky) NewDepthMetric(string) sched.GaugeMetric { return p.metric() }
func (p *panicky) NewAddsMetric(string) sched.CounterMetric {
	switch p.newMode {
	case "panic":
		panic("provider bug")
	case "nil":
		return nil
	}
	return p.metric()
}
func (p *panicky) NewLatencyMetric(string) sched.HistogramMetric      { return p.metric() }
func (p *panicky) NewWorkDurationMetric(string) sched.HistogramMetric { return p.metric() }
func (p *panicky) NewUnfinishedWorkSecondsMetric(string) sched.SettableGaugeMetric {
	return p.metric()
}
func (p *panicky) NewLongestRunningProcessorSecondsMetric(string) sched.SettableGaugeMetric {
	return p.metric()
}
func (p *panicky) NewRetriesMetric(string) sched.CounterMetric { return p.metric() }

type panickyMetric struct{ p *panicky }

func (m *panickyMetric) hit() {
	m.p.calls.Add(1)
	if m.p.armed.Load() {
		panic("metric bug")
	}
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
		s := newScheduler(t, sched.Config{Workers: 1, Metrics: &panicky{newMode: mode}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		_, err := sched.NewQueue(s, "q", sched.QueueConfig[int, int]{Handler: func(context.Context, *sched.Job[int, int]) error { return nil }})
		if !errors.Is(err, sched.ErrInvalid) {
			t.Errorf("NewQueue with a provider that returns %s: %v, want ErrInvalid", mode, err)
		}
	}
	p := &panicky{}
	s := newScheduler(t, sched.Config{Workers: 2, Metrics: p, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
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
