package prometheus_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/goleak"

	jkprom "github.com/jobkit/jobkit/metrics/prometheus"
	"github.com/jobkit/jobkit/recovery"
	"github.com/jobkit/jobkit/sched"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// quiet discards the logs of the tests' schedulers and reapers.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// setup returns a pedantic registry and a Provider registered with it.
func setup(t *testing.T, opts jkprom.Options) (*prometheus.Registry, *jkprom.Provider) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	p, err := jkprom.New(reg, opts)
	if err != nil {
		t.Fatal(err)
	}
	return reg, p
}

// series gathers reg and returns the series of the metric named name whose
// queue label is queue, or nil if there is none.
func series(t *testing.T, reg prometheus.Gatherer, name, queue string) *dto.Metric {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == jkprom.QueueLabel && l.GetValue() == queue {
					return m
				}
			}
		}
	}
	return nil
}

// value returns the value of a gauge or counter series; it fails the test
// if there is none.
func value(t *testing.T, reg prometheus.Gatherer, name, queue string) float64 {
	t.Helper()
	m := series(t, reg, name, queue)
	switch {
	case m == nil:
		t.Fatalf("no series %s{queue=%q}", name, queue)
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	}
	t.Fatalf("%s{queue=%q} is neither a gauge nor a counter", name, queue)
	return 0
}

// histogram returns the sample count and sum of a histogram series; it
// fails the test if there is none.
func histogram(t *testing.T, reg prometheus.Gatherer, name, queue string) (uint64, float64) {
	t.Helper()
	m := series(t, reg, name, queue)
	if m == nil || m.Histogram == nil {
		t.Fatalf("no histogram %s{queue=%q}", name, queue)
	}
	return m.Histogram.GetSampleCount(), m.Histogram.GetSampleSum()
}

// A real scheduler moves each of the seven sched metrics: a slow job holds
// the only worker while two more wait (depth, unfinished and longest
// running), one of those fails once and is retried.
func TestSchedulerMetrics(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		reg, p := setup(t, jkprom.Options{})
		s, err := sched.New(sched.Config{Workers: 1, Loops: 1, Metrics: p, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		started, release := make(chan struct{}), make(chan struct{})
		var done sync.WaitGroup
		q, err := sched.NewQueue(s, "resize", sched.QueueConfig[string, string]{
			Handler: func(ctx context.Context, j *sched.Job[string, string]) error {
				switch {
				case j.Payload == "slow":
					close(started)
					<-release
				case j.Payload == "flaky" && j.Attempt == 1:
					return errors.New("disk busy")
				}
				done.Done()
				return nil
			},
			Retry: &sched.RetryPolicy{MaxRetries: 3, Base: 1}, // retry at once
		})
		if err != nil {
			t.Fatal(err)
		}
		add := func(v string) {
			t.Helper()
			done.Add(1)
			if _, ok, err := q.Add(ctx, v); !ok || err != nil {
				t.Fatalf("Add(%q) = %v, %v", v, ok, err)
			}
		}
		const name = "jobkit_sched_"
		add("slow")
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		<-started
		add("ok")
		add("flaky")
		const held = 1100 * time.Millisecond
		time.Sleep(held) // the metrics loop samples the gauges meanwhile
		synctest.Wait()
		if d := value(t, reg, name+"depth", "resize"); d != 2 {
			t.Errorf("depth %v while the worker is held, want 2", d)
		}
		for _, g := range []string{"unfinished_work_seconds", "longest_running_processor_seconds"} {
			if v := value(t, reg, name+g, "resize"); !(v > 0 && v <= held.Seconds()) {
				t.Errorf("%s %v while one run is %v in, want in (0, %v]", g, v, held, held.Seconds())
			}
		}

		close(release)
		done.Wait()
		time.Sleep(time.Second) // a sample after the runs
		synctest.Wait()
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()

		for _, g := range []string{"depth", "unfinished_work_seconds", "longest_running_processor_seconds"} {
			if v := value(t, reg, name+g, "resize"); v != 0 {
				t.Errorf("%s %v once all is done, want 0", g, v)
			}
		}
		if v := value(t, reg, name+"adds_total", "resize"); v != 3 {
			t.Errorf("adds_total %v, want 3", v)
		}
		if v := value(t, reg, name+"retries_total", "resize"); v != 1 {
			t.Errorf("retries_total %v, want 1", v)
		}
		// four runs: slow, ok, flaky and flaky's retry
		if n, sum := histogram(t, reg, name+"work_duration_seconds", "resize"); n != 4 || sum < held.Seconds() {
			t.Errorf("work_duration_seconds: %d runs summing %vs, want 4 runs, at least %v", n, sum, held)
		}
		// ok and flaky waited for the slow run to end
		if n, sum := histogram(t, reg, name+"queue_duration_seconds", "resize"); n != 4 || sum < 2*held.Seconds() {
			t.Errorf("queue_duration_seconds: %d dispatches summing %vs, want 4, at least %v", n, sum, 2*held)
		}
		if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
			t.Errorf("lint: %v, %+v", err, problems)
		}
	})
}

// A reaper moves the three recovery metrics: a run that hangs past its
// lease is rescued, hangs again and is poisoned; being taken twice raises
// an alert.
func TestReaperMetrics(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		reg, p := setup(t, jkprom.Options{})
		s, err := sched.New(sched.Config{Workers: 2, Loops: 1, Metrics: p, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		r, err := recovery.New(s, recovery.Config{
			Interval: 100 * time.Millisecond, Grace: 200 * time.Millisecond,
			TakenThreshold: 1, Metrics: p, Logger: quiet,
		})
		if err != nil {
			t.Fatal(err)
		}
		gate := make(chan struct{})
		q, err := sched.NewQueue(s, "stuck", sched.QueueConfig[int, int]{
			Handler:    func(context.Context, *sched.Job[int, int]) error { <-gate; return nil }, // ignores ctx
			Lease:      time.Second,
			MaxRescues: 1,
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok, err := q.Add(ctx, 1); !ok || err != nil {
			t.Fatalf("Add = %v, %v", ok, err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if err := r.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		close(gate)
		if err := r.Stop(ctx); err != nil {
			t.Error(err)
		}
		if err := s.Stop(ctx); err != nil {
			t.Error(err)
		}
		synctest.Wait()

		const name = "jobkit_recovery_"
		if v := value(t, reg, name+"rescues_total", "stuck"); v != 2 {
			t.Errorf("rescues_total %v, want 2 (a rerun, then the poisoning)", v)
		}
		if v := value(t, reg, name+"poisoned_total", "stuck"); v != 1 {
			t.Errorf("poisoned_total %v, want 1", v)
		}
		if v := value(t, reg, name+"alerts_total", "stuck"); v < 1 {
			t.Errorf("alerts_total %v, want at least 1 (taken twice)", v)
		}
		if st := r.Stats(); float64(st.Rescued) != value(t, reg, name+"rescues_total", "stuck") {
			t.Errorf("reaper stats %+v disagree with rescues_total", st)
		}
	})
}

// The recovery metrics, called directly, with their help texts.
func TestRecoveryMetrics(t *testing.T) {
	t.Parallel()
	reg, p := setup(t, jkprom.Options{})
	var _ recovery.MetricsProvider = p
	p.NewRescuesMetric("a").Inc()
	p.NewRescuesMetric("a").Inc() // the same series again
	p.NewPoisonedMetric("a").Inc()
	p.NewAlertsMetric("b").Inc()
	want := `
# HELP jobkit_recovery_alerts_total Alerts the reaper raised (an entry taken too often, a stalled queue).
# TYPE jobkit_recovery_alerts_total counter
jobkit_recovery_alerts_total{queue="b"} 1
# HELP jobkit_recovery_poisoned_total Entries the reaper poisoned because their leases lapsed too many times.
# TYPE jobkit_recovery_poisoned_total counter
jobkit_recovery_poisoned_total{queue="a"} 1
# HELP jobkit_recovery_rescues_total Runs rescued by the reaper because their lease lapsed, poisoned ones included.
# TYPE jobkit_recovery_rescues_total counter
jobkit_recovery_rescues_total{queue="a"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

// The depth gauge is settable, so that sched sets it; the other gauges are
// too, by the interface.
func TestDepthIsSettable(t *testing.T) {
	t.Parallel()
	reg, p := setup(t, jkprom.Options{})
	g, ok := p.NewDepthMetric("q").(sched.SettableGaugeMetric)
	if !ok {
		t.Fatal("the depth gauge does not implement sched.SettableGaugeMetric")
	}
	g.Set(7)
	p.NewDepthMetric("q").Inc()
	if v := value(t, reg, "jobkit_sched_depth", "q"); v != 8 {
		t.Errorf("depth %v, want 8", v)
	}
}

// Options: namespace, const labels and buckets reach the series, and the
// buckets are copied.
func TestOptions(t *testing.T) {
	t.Parallel()
	buckets := []float64{0.1, 1, math.Inf(1)}
	reg, p := setup(t, jkprom.Options{
		Namespace:   "acme",
		ConstLabels: prometheus.Labels{"scheduler": "west"},
		Buckets:     buckets,
	})
	buckets[0] = 5 // must not reach the histogram
	p.NewWorkDurationMetric("q").Observe(0.5)
	m := series(t, reg, "acme_sched_work_duration_seconds", "q")
	if m == nil {
		t.Fatal("no acme_sched_work_duration_seconds{queue=q}")
	}
	var bounds []float64
	var counts []uint64
	for _, b := range m.GetHistogram().GetBucket() {
		bounds = append(bounds, b.GetUpperBound())
		counts = append(counts, b.GetCumulativeCount())
	}
	if len(bounds) != 2 || bounds[0] != 0.1 || bounds[1] != 1 || counts[0] != 0 || counts[1] != 1 {
		t.Errorf("buckets %v with counts %v, want [0.1 1] with [0 1]", bounds, counts)
	}
	found := false
	for _, l := range m.GetLabel() {
		found = found || l.GetName() == "scheduler" && l.GetValue() == "west"
	}
	if !found {
		t.Errorf("const label scheduler=west missing from %v", m.GetLabel())
	}
}

// Bad input returns errors; nothing panics.
func TestNewBadInput(t *testing.T) {
	t.Parallel()
	var nilRegistry *prometheus.Registry
	for _, c := range []struct {
		name    string
		reg     prometheus.Registerer
		opts    jkprom.Options
		invalid bool // the error wraps ErrInvalid
	}{
		{"nil *Registry", nilRegistry, jkprom.Options{}, true},
		{"const label queue", nil, jkprom.Options{ConstLabels: prometheus.Labels{"queue": "x"}}, true},
		{"const label le", nil, jkprom.Options{ConstLabels: prometheus.Labels{"le": "x"}}, true},
		{"NaN bucket", nil, jkprom.Options{Buckets: []float64{1, math.NaN()}}, true},
		{"NaN first bucket", nil, jkprom.Options{Buckets: []float64{math.NaN(), 1}}, true},
		{"decreasing buckets", nil, jkprom.Options{Buckets: []float64{2, 1}}, true},
		{"repeated bucket", nil, jkprom.Options{Buckets: []float64{1, 1}}, true},
		{"namespace not UTF-8", nil, jkprom.Options{Namespace: "\xff"}, false},
		{"const label value not UTF-8", nil, jkprom.Options{ConstLabels: prometheus.Labels{"x": "\xff"}}, false},
		{"const label name empty", nil, jkprom.Options{ConstLabels: prometheus.Labels{"": "x"}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			reg := c.reg
			if reg == nil {
				reg = prometheus.NewRegistry()
			}
			p, err := jkprom.New(reg, c.opts)
			if err == nil || p != nil {
				t.Fatalf("New = %v, %v; want an error", p, err)
			}
			if errors.Is(err, jkprom.ErrInvalid) != c.invalid {
				t.Errorf("error %q: wraps ErrInvalid %v, want %v", err, !c.invalid, c.invalid)
			}
		})
	}
}

// A second Provider with the same names on one registry is refused with an
// AlreadyRegisteredError, and registers nothing; with a distinguishing
// const label it is accepted; after Unregister the names are free again.
func TestNewTwice(t *testing.T) {
	t.Parallel()
	reg, p := setup(t, jkprom.Options{})
	p.NewAddsMetric("q").Inc()
	p2, err := jkprom.New(reg, jkprom.Options{Buckets: []float64{1, 2}})
	var are prometheus.AlreadyRegisteredError
	if !errors.As(err, &are) || are.ExistingCollector != p || p2 != nil {
		t.Fatalf("second New = %v, %v; want an AlreadyRegisteredError naming the first", p2, err)
	}
	// the same names with other label names: refused too
	if west, err := jkprom.New(reg, jkprom.Options{ConstLabels: prometheus.Labels{"scheduler": "west"}}); err == nil || west != nil {
		t.Fatalf("New with an extra const label = %v, %v; want an error", west, err)
	}
	if !reg.Unregister(p) {
		t.Fatal("Unregister(p) = false")
	}
	if _, err := jkprom.New(reg, jkprom.Options{}); err != nil {
		t.Fatalf("New after Unregister: %v", err)
	}
	regs := prometheus.NewPedanticRegistry()
	for _, dc := range []string{"east", "west"} {
		p, err := jkprom.New(regs, jkprom.Options{ConstLabels: prometheus.Labels{"scheduler": dc}})
		if err != nil {
			t.Fatalf("New for %s: %v", dc, err)
		}
		p.NewAddsMetric("q").Inc()
	}
	if n, err := testutil.GatherAndCount(regs, "jobkit_sched_adds_total"); err != nil || n != 2 {
		t.Errorf("two schedulers' adds_total: %d series, %v; want 2", n, err)
	}
}

// A nil registerer means prometheus.DefaultRegisterer.
func TestNewNilRegisterer(t *testing.T) {
	t.Parallel()
	p, err := jkprom.New(nil, jkprom.Options{Namespace: "jobkit_test_default"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !prometheus.DefaultRegisterer.Unregister(p) {
			t.Error("not registered with prometheus.DefaultRegisterer")
		}
	})
	p.NewRetriesMetric("q").Inc()
	if v := value(t, prometheus.DefaultGatherer, "jobkit_test_default_sched_retries_total", "q"); v != 1 {
		t.Errorf("retries_total %v in the default registry, want 1", v)
	}
}

// sched accepts any bytes in a queue name, Prometheus only UTF-8: invalid
// bytes become U+FFFD rather than a panic in sched.NewQueue.
// sched refuses queue names that are not UTF-8, but the Provider may have
// other callers (a recovery reaper of another scheduler, a user's code):
// it replaces invalid bytes rather than let Prometheus panic.
func TestQueueNameNotUTF8(t *testing.T) {
	t.Parallel()
	reg, p := setup(t, jkprom.Options{})
	p.NewAddsMetric("a\xffb").Inc()
	if v := value(t, reg, "jobkit_sched_adds_total", "a\uFFFDb"); v != 1 {
		t.Errorf("adds_total %v, want 1", v)
	}
}

// Using a Provider not made by New is programmer misuse: it panics with
// the package's prefix.
func TestZeroProviderPanics(t *testing.T) {
	t.Parallel()
	for name, f := range map[string]func(p *jkprom.Provider){
		"NewDepthMetric":  func(p *jkprom.Provider) { p.NewDepthMetric("q") },
		"NewAlertsMetric": func(p *jkprom.Provider) { p.NewAlertsMetric("q") },
		"Collect":         func(p *jkprom.Provider) { p.Collect(make(chan prometheus.Metric, 100)) },
	} {
		for _, p := range []*jkprom.Provider{nil, new(jkprom.Provider)} {
			func() {
				defer func() {
					if msg, _ := recover().(string); !strings.HasPrefix(msg, "prometheus: ") {
						t.Errorf("%s on %v: recovered %q, want a panic prefixed prometheus: ", name, p, msg)
					}
				}()
				f(p)
			}()
		}
	}
}
