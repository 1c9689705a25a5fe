package prometheus

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobkit/jobkit/recovery"
	"github.com/jobkit/jobkit/sched"
)

// ErrInvalid is wrapped by the errors New returns for invalid Options or a
// nil *prometheus.Registry.
var ErrInvalid = errors.New("prometheus: invalid argument")

// DefaultNamespace is the namespace of the metrics when Options.Namespace is
// empty.
const DefaultNamespace = "jobkit"

// QueueLabel is the name of the label that carries a queue's name on every
// series.
const QueueLabel = "queue"

// Subsystems of the metrics: the scheduler's and the reaper's.
const (
	// SchedSubsystem is the subsystem of the scheduler's seven metrics.
	SchedSubsystem = "sched"
	// RecoverySubsystem is the subsystem of the reaper's three metrics.
	RecoverySubsystem = "recovery"
)

// Options configures New. The zero Options is valid: every field has a
// default.
type Options struct {
	// Namespace is the first part of every metric name. Defaults to
	// DefaultNamespace ("jobkit"); there is no way to ask for none.
	Namespace string

	// ConstLabels are added to every series, for instance to tell apart
	// several schedulers exported to one registry. They must not use the
	// names "queue" (QueueLabel) or "le" (the histograms' bucket label).
	// Defaults to none.
	ConstLabels prometheus.Labels

	// Buckets are the upper bounds, in seconds and strictly increasing, of
	// the buckets of the two histograms (queue_duration_seconds and
	// work_duration_seconds); a last +Inf bound may be given or left
	// implicit. New copies them. Defaults (when empty) to
	// prometheus.ExponentialBuckets(10e-9, 10, 12): twelve bounds from
	// 10ns to 1000s, as controller-runtime's workqueue metrics use.
	Buckets []float64
}

// Provider makes the Prometheus series of the scheduler's and the reaper's
// metrics. It implements sched.MetricsProvider and
// recovery.MetricsProvider: set it as sched.Config.Metrics and
// recovery.Config.Metrics. It is also the prometheus.Collector that New
// registers; pass it to the registerer's Unregister to unregister its
// metrics.
//
// A Provider is safe for concurrent use. The zero Provider is not usable:
// make one with New. Each New…Metric call costs one label lookup in its
// metric vector (a hash of the queue name); the returned metric is the
// series' own, as cheap to update as any Prometheus metric. Calling a
// method twice with the same queue name returns the same series.
type Provider struct {
	depth, unfinished, longest *prometheus.GaugeVec
	adds, retries              *prometheus.CounterVec
	latency, workDuration      *prometheus.HistogramVec
	rescues, poisoned, alerts  *prometheus.CounterVec
}

var (
	_ sched.MetricsProvider    = (*Provider)(nil)
	_ recovery.MetricsProvider = (*Provider)(nil)
	_ prometheus.Collector     = (*Provider)(nil)
)

// New returns a Provider whose metrics are registered with reg, once, in
// one Register call: either all ten metric vectors are registered or none
// is. A nil reg means prometheus.DefaultRegisterer.
//
// New returns an error wrapping ErrInvalid for invalid opts or a nil
// *prometheus.Registry in a non-nil reg, and the registerer's error,
// wrapped, if it refuses the metrics: a prometheus.AlreadyRegisteredError
// (match it with errors.As) when a Provider with the same Options is
// already registered with reg, another error for a clash with other metrics
// of the same names or for names or label values that Prometheus rejects.
func New(reg prometheus.Registerer, opts Options) (*Provider, error) {
	if reg == nil {
		reg = prometheus.DefaultRegisterer
	} else if r, ok := reg.(*prometheus.Registry); ok && r == nil {
		return nil, fmt.Errorf("%w: nil *prometheus.Registry", ErrInvalid)
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	p := newProvider(opts)
	if err := reg.Register(p); err != nil {
		return nil, fmt.Errorf("prometheus: registering jobkit's metrics: %w", err)
	}
	return p, nil
}

// withDefaults validates o and returns it with its defaults filled in and
// its Buckets copied.
func (o Options) withDefaults() (Options, error) {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	for name := range o.ConstLabels {
		if name == QueueLabel || name == "le" {
			return o, fmt.Errorf("%w: const label %q is reserved", ErrInvalid, name)
		}
	}
	if len(o.Buckets) == 0 {
		o.Buckets = prometheus.ExponentialBuckets(10e-9, 10, 12)
		return o, nil
	}
	for i, b := range o.Buckets {
		switch {
		case math.IsNaN(b):
			return o, fmt.Errorf("%w: bucket %d is NaN", ErrInvalid, i)
		case i > 0 && !(o.Buckets[i-1] < b):
			return o, fmt.Errorf("%w: buckets not strictly increasing: %v then %v", ErrInvalid, o.Buckets[i-1], b)
		}
	}
	o.Buckets = append([]float64(nil), o.Buckets...)
	return o, nil
}

func newProvider(o Options) *Provider {
	labels := []string{QueueLabel}
	gauge := func(sub, name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: o.Namespace, Subsystem: sub, Name: name, Help: help, ConstLabels: o.ConstLabels,
		}, labels)
	}
	counter := func(sub, name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: o.Namespace, Subsystem: sub, Name: name, Help: help, ConstLabels: o.ConstLabels,
		}, labels)
	}
	histogram := func(sub, name, help string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: o.Namespace, Subsystem: sub, Name: name, Help: help, ConstLabels: o.ConstLabels,
			Buckets: o.Buckets,
		}, labels)
	}
	return &Provider{
		depth: gauge(SchedSubsystem, "depth",
			"Entries of the queue ready to run (pending), sampled twice a second."),
		adds: counter(SchedSubsystem, "adds_total",
			"Entries added to the queue."),
		latency: histogram(SchedSubsystem, "queue_duration_seconds",
			"Seconds an entry waited, from when it became ready to run (its add, the end of its delay, backoff or snooze, or the end of a run cut short to run again) to the start of a run."),
		workDuration: histogram(SchedSubsystem, "work_duration_seconds",
			"Seconds a run of the queue's handler took."),
		unfinished: gauge(SchedSubsystem, "unfinished_work_seconds",
			"Seconds the runs in progress have taken so far, summed, sampled twice a second; "+
				"growing steadily with no work_duration observations points to stuck runs."),
		longest: gauge(SchedSubsystem, "longest_running_processor_seconds",
			"Seconds the longest run in progress has taken so far, sampled twice a second."),
		retries: counter(SchedSubsystem, "retries_total",
			"Runs that failed and were scheduled to retry."),
		rescues: counter(RecoverySubsystem, "rescues_total",
			"Runs rescued by the reaper because their lease lapsed, poisoned ones included."),
		poisoned: counter(RecoverySubsystem, "poisoned_total",
			"Entries the reaper poisoned because their leases lapsed too many times."),
		alerts: counter(RecoverySubsystem, "alerts_total",
			"Alerts the reaper raised (an entry taken too often, a stalled queue)."),
	}
}

// made panics if p was not made by New.
func (p *Provider) made() {
	if p == nil || p.depth == nil {
		panic("prometheus: Provider not made by New")
	}
}

// Describe sends the descriptors of p's ten metrics to ch. It implements
// prometheus.Collector.
func (p *Provider) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range p.collectors() {
		c.Describe(ch)
	}
}

// Collect sends the current series of p's metrics to ch. It implements
// prometheus.Collector.
func (p *Provider) Collect(ch chan<- prometheus.Metric) {
	for _, c := range p.collectors() {
		c.Collect(ch)
	}
}

func (p *Provider) collectors() []prometheus.Collector {
	p.made()
	return []prometheus.Collector{
		p.depth, p.adds, p.latency, p.workDuration, p.unfinished, p.longest, p.retries,
		p.rescues, p.poisoned, p.alerts,
	}
}

// label returns queue as a label value: Prometheus requires valid UTF-8,
// and sched accepts any bytes, so invalid bytes become U+FFFD (two names
// that differ only in invalid bytes share their series).
func label(queue string) string {
	return strings.ToValidUTF8(queue, "\uFFFD")
}

// NewDepthMetric returns the depth gauge of the queue named name. The gauge
// also implements sched.SettableGaugeMetric, so the scheduler sets it to
// the queue's pending entries rather than counting up and down. It
// implements sched.MetricsProvider.
func (p *Provider) NewDepthMetric(name string) sched.GaugeMetric {
	p.made()
	return p.depth.WithLabelValues(label(name))
}

// NewAddsMetric returns the adds_total counter of the queue named name. It
// implements sched.MetricsProvider.
func (p *Provider) NewAddsMetric(name string) sched.CounterMetric {
	p.made()
	return p.adds.WithLabelValues(label(name))
}

// NewLatencyMetric returns the queue_duration_seconds histogram of the
// queue named name. It implements sched.MetricsProvider.
func (p *Provider) NewLatencyMetric(name string) sched.HistogramMetric {
	p.made()
	return p.latency.WithLabelValues(label(name))
}

// NewWorkDurationMetric returns the work_duration_seconds histogram of the
// queue named name. It implements sched.MetricsProvider.
func (p *Provider) NewWorkDurationMetric(name string) sched.HistogramMetric {
	p.made()
	return p.workDuration.WithLabelValues(label(name))
}

// NewUnfinishedWorkSecondsMetric returns the unfinished_work_seconds gauge
// of the queue named name. It implements sched.MetricsProvider.
func (p *Provider) NewUnfinishedWorkSecondsMetric(name string) sched.SettableGaugeMetric {
	p.made()
	return p.unfinished.WithLabelValues(label(name))
}

// NewLongestRunningProcessorSecondsMetric returns the
// longest_running_processor_seconds gauge of the queue named name. It
// implements sched.MetricsProvider.
func (p *Provider) NewLongestRunningProcessorSecondsMetric(name string) sched.SettableGaugeMetric {
	p.made()
	return p.longest.WithLabelValues(label(name))
}

// NewRetriesMetric returns the retries_total counter of the queue named
// name. It implements sched.MetricsProvider.
func (p *Provider) NewRetriesMetric(name string) sched.CounterMetric {
	p.made()
	return p.retries.WithLabelValues(label(name))
}

// NewRescuesMetric returns the rescues_total counter of queue. It
// implements recovery.MetricsProvider.
func (p *Provider) NewRescuesMetric(queue string) sched.CounterMetric {
	p.made()
	return p.rescues.WithLabelValues(label(queue))
}

// NewPoisonedMetric returns the poisoned_total counter of queue. It
// implements recovery.MetricsProvider.
func (p *Provider) NewPoisonedMetric(queue string) sched.CounterMetric {
	p.made()
	return p.poisoned.WithLabelValues(label(queue))
}

// NewAlertsMetric returns the alerts_total counter of queue. It implements
// recovery.MetricsProvider.
func (p *Provider) NewAlertsMetric(queue string) sched.CounterMetric {
	p.made()
	return p.alerts.WithLabelValues(label(queue))
}
