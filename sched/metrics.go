package sched

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jobkit/jobkit/internal/panicval"
)

// MetricsProvider makes the metrics of a queue: client-go's seven
// workqueue metrics, with the method names and metric interfaces of
// client-go's workqueue.MetricsProvider. (The metric interfaces are this
// package's, so a provider written for client-go needs a thin wrapper;
// module github.com/jobkit/jobkit/metrics/prometheus is a ready one.) Each
// method is called once per queue, with the queue's name. Depth and the two
// running-time gauges are samples, taken twice a second while the
// scheduler runs; the others move with each event. A provider that panics
// or returns a nil metric makes NewQueue fail with ErrInvalid; a metric
// that panics later, or ends the goroutine calling it (runtime.Goexit),
// switches its queue's metrics off, with one error logged, and the jobs
// run on (see "Faults" in the package doc).
type MetricsProvider interface {
	// NewDepthMetric counts the entries ready to run (pending).
	NewDepthMetric(name string) GaugeMetric
	// NewAddsMetric counts the entries added.
	NewAddsMetric(name string) CounterMetric
	// NewLatencyMetric observes, in seconds, once a run, how long its
	// entry waited ready to run: from its add, the end of its delay,
	// retry backoff or snooze, or the end of a run cut short to run again
	// (Claim.ReadyAt), to the start of the run, as
	// client-go's queue latency counts from when a delayed item is added
	// to the queue to when a worker gets it.
	NewLatencyMetric(name string) HistogramMetric
	// NewWorkDurationMetric observes, in seconds, how long runs take. A
	// run abandoned by a rescue or StopAndCancel, or whose result the
	// backend did not settle (rescued meanwhile by another process's
	// reaper, or a Settle that failed), is not observed: it runs again.
	NewWorkDurationMetric(name string) HistogramMetric
	// NewUnfinishedWorkSecondsMetric is set, twice a second, to the seconds
	// that the runs in progress have taken so far, summed.
	NewUnfinishedWorkSecondsMetric(name string) SettableGaugeMetric
	// NewLongestRunningProcessorSecondsMetric is set, twice a second, to
	// the seconds the longest run in progress has taken so far.
	NewLongestRunningProcessorSecondsMetric(name string) SettableGaugeMetric
	// NewRetriesMetric counts the runs that failed and were scheduled to
	// retry: settled by the backend as retries.
	NewRetriesMetric(name string) CounterMetric
}

// GaugeMetric is a gauge that goes up and down by one. A GaugeMetric that
// also implements SettableGaugeMetric is set instead.
type GaugeMetric interface {
	Inc()
	Dec()
}

// SettableGaugeMetric is a gauge that is set.
type SettableGaugeMetric interface {
	Set(float64)
}

// CounterMetric counts.
type CounterMetric interface {
	Inc()
}

// HistogramMetric observes values.
type HistogramMetric interface {
	Observe(float64)
}

// queueMetrics are the metrics of one queue, and what they need to know.
type queueMetrics struct {
	depth               GaugeMetric
	adds, retries       CounterMetric
	latency, duration   HistogramMetric
	unfinished, longest SettableGaugeMetric
	// mu and a built-in map, not a concurrent map: on the project's
	// 2-core machine a store and delete through xsync/v4's Map took 1.70×
	// the time of this (107.6 ns against 63.1 ns, medians of 6,
	// BenchmarkRunningRegistry) and allocated 48 B, where this allocates
	// nothing.
	mu       sync.Mutex
	depthNow int
	running  map[any]time.Time // batch → start of its current run

	// off is set when one of the provider's metrics panicked: the queue's
	// metrics are then switched off, and the panic logged, once.
	off  atomic.Bool
	log  *slog.Logger
	name string
}

// newQueueMetrics makes the metrics of the queue named name. A provider
// that panics or returns a nil metric is an error wrapping ErrInvalid.
func newQueueMetrics(p MetricsProvider, name string, log *slog.Logger) (m *queueMetrics, err error) {
	returned := false
	defer func() {
		// Not returned with recover nil: under GODEBUG=panicnil=1, a
		// panic(nil), which recover cannot tell from none.
		if r := recover(); r != nil || !returned {
			m, err = nil, fmt.Errorf("%w: the metrics provider panicked: %s", ErrInvalid, panicval.String(r))
		}
	}()
	m = &queueMetrics{
		depth:      p.NewDepthMetric(name),
		adds:       p.NewAddsMetric(name),
		latency:    p.NewLatencyMetric(name),
		duration:   p.NewWorkDurationMetric(name),
		unfinished: p.NewUnfinishedWorkSecondsMetric(name),
		longest:    p.NewLongestRunningProcessorSecondsMetric(name),
		retries:    p.NewRetriesMetric(name),
		running:    make(map[any]time.Time),
		log:        log,
		name:       name,
	}
	returned = true
	if m.depth == nil || m.adds == nil || m.latency == nil || m.duration == nil ||
		m.unfinished == nil || m.longest == nil || m.retries == nil {
		return nil, fmt.Errorf("%w: the metrics provider returned a nil metric", ErrInvalid)
	}
	return m, nil
}

// guard, deferred by every method that calls a metric with the address of
// a flag the method sets once the metrics returned, turns a panic of the
// provider's metric, or its ending the goroutine (runtime.Goexit, which
// leaves the flag unset), into switching the queue's metrics off: a faulty
// metric never takes a worker, a loop or an Add down with it. A goroutine
// so ended is the caller's to make good: every metric is called where
// nothing is half done (see batch.run).
func (m *queueMetrics) guard(returned *bool) {
	r := recover()
	if r == nil && *returned {
		return
	}
	if r == nil {
		r = "runtime.Goexit"
	}
	if m.off.CompareAndSwap(false, true) {
		m.log.Error("sched: a metric panicked; the queue's metrics are off", slog.String("queue", m.name), slog.String("panic", panicval.String(r)))
	}
}

// added counts an add.
func (m *queueMetrics) added() {
	if m.off.Load() {
		return
	}
	returned := false
	defer m.guard(&returned)
	m.adds.Inc()
	returned = true
}

// waited observes that a run started d after its entry became ready.
func (m *queueMetrics) waited(d time.Duration) {
	if m.off.Load() {
		return
	}
	returned := false
	defer m.guard(&returned)
	m.latency.Observe(d.Seconds())
	returned = true
}

// runStarted and runStopped track the run in progress of batch b. They
// call no metric, so they may be called under the batch's lock.
func (m *queueMetrics) runStarted(b any, at time.Time) {
	m.mu.Lock()
	m.running[b] = at
	m.mu.Unlock()
}

func (m *queueMetrics) runStopped(b any) {
	m.mu.Lock()
	delete(m.running, b)
	m.mu.Unlock()
}

// runEnded observes a run that ended after d, and counts a retry. It is
// called without the batch's lock: a metric that hangs holds its worker,
// and nothing else.
func (m *queueMetrics) runEnded(d time.Duration, retried bool) {
	if m.off.Load() {
		return
	}
	returned := false
	defer m.guard(&returned)
	m.duration.Observe(max(d, 0).Seconds()) // not below 0: a Clock may go back
	if retried {
		m.retries.Inc()
	}
	returned = true
}

// update sets the gauges at now, with pending entries ready.
func (m *queueMetrics) update(now time.Time, pending int) {
	if m.off.Load() {
		return
	}
	returned := false
	defer m.guard(&returned)
	m.mu.Lock()
	var sum, longest time.Duration
	for _, at := range m.running {
		d := max(now.Sub(at), 0) // not below 0: a Clock may go back
		sum += d
		longest = max(longest, d)
	}
	delta := pending - m.depthNow
	m.depthNow = pending
	m.mu.Unlock()
	m.unfinished.Set(sum.Seconds())
	m.longest.Set(longest.Seconds())
	if g, ok := m.depth.(SettableGaugeMetric); ok {
		g.Set(float64(pending))
		returned = true
		return
	}
	for ; delta > 0; delta-- {
		m.depth.Inc()
	}
	for ; delta < 0; delta++ {
		m.depth.Dec()
	}
	returned = true
}

// metricsInterval is how often the gauges are updated, as in client-go.
const metricsInterval = 500 * time.Millisecond

// metricsLoop updates the gauges of every queue until ctx is done. It runs
// only when Config.Metrics is set.
func (s *Scheduler) metricsLoop(ctx context.Context) {
	normal := false
	defer func() {
		// Let go by a StopAndCancel while it was in a metric, which hung:
		// counted done then (see letGaugesGo).
		if s.gauges.Swap(gaugesIdle) == gaugesLetGo {
			return
		}
		s.respawn(&normal, s.metricsLoop, ctx)
	}()
	timer := s.clock.NewTimer()
	defer timer.Stop()
	broke := s.clockBroke
	for {
		timer.Reset(metricsInterval)
		select {
		case <-ctx.Done():
			normal = true
			return
		case <-timer.C():
		case <-broke: // once: the timer moves to the system clock
			broke = nil
		}
		now := s.clock.Now()
		s.mu.Lock()
		queues := s.queues
		s.mu.Unlock()
		for _, q := range queues {
			m := q.base().metrics
			if m == nil {
				continue
			}
			var c Counts
			// Not call: a Counts that faults is logged, and its queue's
			// depth left as it was, but the queue is not left alone (its
			// jobs run on, as they do without metrics).
			if err := q.base().guardedCall("Counts", false, nil, func() (err error) { c, err = q.counts(ctx); return err }); err != nil {
				continue
			}
			// Busy first, then ctx: a StopAndCancel that finds the loop
			// idle (after ctx ended) has it return here, and one that
			// finds it busy lets it go.
			s.gauges.Store(gaugesBusy)
			if ctx.Err() != nil {
				normal = true
				return
			}
			m.update(now, c.Pending)
			if !s.gauges.CompareAndSwap(gaugesBusy, gaugesIdle) {
				return // let go meanwhile
			}
		}
	}
}

// Where the metrics loop is (Scheduler.gauges): the gauges' metrics are
// the user's code, and may hang.
const (
	gaugesIdle  = iota
	gaugesBusy  // calling the gauges' metrics
	gaugesLetGo // let go by a StopAndCancel while busy
)

// letGaugesGo is called by a StopAndCancel that abandoned the runs still
// going and waits for the rest: a metrics loop hung in a gauge's metric is
// let go as the abandoned handlers are, counted done and left to end when
// the metric returns, so that StopAndCancel returns.
func (s *Scheduler) letGaugesGo() {
	if s.gauges.CompareAndSwap(gaugesBusy, gaugesLetGo) {
		s.helpers.Done()
	}
}
