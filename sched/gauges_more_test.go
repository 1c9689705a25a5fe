package sched_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// gauges is a MetricsProvider that keeps what its metrics are told, by
// metric name: the last value set on each settable gauge, and every value
// a histogram observed.
type gauges struct {
	mu       sync.Mutex
	last     map[string]float64
	observed map[string][]float64
}

func newGauges() *gauges {
	return &gauges{last: make(map[string]float64), observed: make(map[string][]float64)}
}

type gauge struct {
	g    *gauges
	name string
}

func (m gauge) Inc() {}
func (m gauge) Dec() {}
func (m gauge) Observe(v float64) {
	m.g.mu.Lock()
	m.g.observed[m.name] = append(m.g.observed[m.name], v)
	m.g.mu.Unlock()
}
func (m gauge) Set(v float64) { m.g.mu.Lock(); m.g.last[m.name] = v; m.g.mu.Unlock() }
func (g *gauges) get(name string) float64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.last[name]
}

// observations returns what the histogram name observed.
func (g *gauges) observations(name string) []float64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.observed[name])
}

func (g *gauges) NewDepthMetric(string) sched.GaugeMetric       { return gauge{g, "depth"} }
func (g *gauges) NewAddsMetric(string) sched.CounterMetric      { return gauge{g, "adds"} }
func (g *gauges) NewLatencyMetric(string) sched.HistogramMetric { return gauge{g, "latency"} }
func (g *gauges) NewWorkDurationMetric(string) sched.HistogramMetric {
	return gauge{g, "duration"}
}
func (g *gauges) NewUnfinishedWorkSecondsMetric(string) sched.SettableGaugeMetric {
	return gauge{g, "unfinished"}
}
func (g *gauges) NewLongestRunningProcessorSecondsMetric(string) sched.SettableGaugeMetric {
	return gauge{g, "longest"}
}
func (g *gauges) NewRetriesMetric(string) sched.CounterMetric { return gauge{g, "retries"} }

// Once every run has ended, settled or abandoned by a rescue, the
// unfinished-work and longest-running gauges fall back to 0. (Review:
// kills dropping runStopped from settle and from abandonLocked, which left
// the batch in the running runs for ever.)
func TestGaugesFallBackOnceRunsEnd(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"settled", "rescued"} {
		t.Run(how, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := newGauges()
				s := newScheduler(t, sched.Config{Workers: 2, Metrics: g, Logger: quiet})
				release := make(chan struct{})
				defer close(release)
				cfg := sched.QueueConfig[int, int]{Handler: func(context.Context, *sched.Job[int, int]) error {
					time.Sleep(time.Second)
					return nil
				}}
				if how == "rescued" {
					first := true
					cfg.Lease = time.Second
					cfg.Handler = func(context.Context, *sched.Job[int, int]) error {
						if first {
							first = false
							<-release // hangs until the test ends: abandoned
						}
						return nil
					}
				}
				q := must.Queue(t, s, "q", cfg)
				must.Add(t, q, 1)
				time.Sleep(2 * time.Second)
				synctest.Wait()
				if how == "rescued" {
					rs, err := s.Inspector().Reap(context.Background(), s.Clock().Now(), 0)
					if err != nil || len(rs) != 1 || !rs[0].Running {
						t.Fatalf("Reap = %+v, %v; want the running claim rescued", rs, err)
					}
				}
				time.Sleep(5 * time.Second)
				synctest.Wait()
				if c := must.Counts(t, q); c.Succeeded != 1 {
					t.Fatalf("counts %+v, want the entry succeeded", c)
				}
				if u, l := g.get("unfinished"), g.get("longest"); u != 0 || l != 0 {
					t.Errorf("unfinished %vs, longest %vs once every run ended; want 0", u, l)
				}
			})
		})
	}
}
