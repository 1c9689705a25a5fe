package recovery_test

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/recovery"
	"github.com/jobkit/jobkit/sched"
)

// A metric that calls runtime.Goexit at a look's first rescue ends that
// look's goroutine; the look's other rescues happened all the same, and
// Stats counts them. Before, Stats.Rescued was counted rescue by rescue
// between the metrics' calls, and lost every rescue of the look after the
// first: two runs rescued at once counted one.
func TestGoexitInAMetricLosesNoRescueFromStats(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g := newRig(t, 2, recovery.Config{Metrics: badMetrics{goexit: true}, TakenThreshold: -1, StallThreshold: -1})
		var runs atomic.Int64
		q := queue[int](g, "q", sched.QueueConfig[int, int]{BatchSize: 1, Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
			if runs.Add(1) <= 2 {
				g.hang() // both first runs: their leases lapse together
			}
			return nil
		}})
		a, b := add(t, q, 1), add(t, q, 2)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		ea, eb := get(t, q, a), get(t, q, b)
		if ea.State != sched.StateSucceeded || eb.State != sched.StateSucceeded {
			t.Fatalf("entries %v and %v, want both succeeded after a rescue", ea.State, eb.State)
		}
		if st := g.r.Stats(); st.Rescued != ea.Rescues+eb.Rescues {
			t.Errorf("Stats %+v; the entries were rescued %d times", st, ea.Rescues+eb.Rescues)
		}
	})
}

// alertsGoexit is a MetricsProvider whose alerts counter calls
// runtime.Goexit.
type alertsGoexit struct{}

type goexitCounter struct{}

func (goexitCounter) Inc() { runtime.Goexit() }

func (alertsGoexit) NewRescuesMetric(string) sched.CounterMetric  { return nil }
func (alertsGoexit) NewPoisonedMetric(string) sched.CounterMetric { return nil }
func (alertsGoexit) NewAlertsMetric(string) sched.CounterMetric   { return goexitCounter{} }

// A metric that calls runtime.Goexit as an alert is counted loses neither
// the alert's hook nor its record. Before, the alert was marked raised and
// counted in Stats, then the counter ended the look before OnAlert was
// called, and no later look raised it again: OnAlert never saw it.
func TestGoexitInAMetricLosesNoAlert(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g := newRig(t, 1, recovery.Config{Metrics: alertsGoexit{}, TakenThreshold: 1, StallThreshold: -1})
		var runs atomic.Int64
		q := queue[int](g, "q", sched.QueueConfig[int, int]{
			Lease: time.Hour, Retry: &sched.RetryPolicy{MaxRetries: 3, Base: time.Millisecond},
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				if runs.Add(1) == 1 {
					return errors.New("fails once")
				}
				g.hang() // its second run: taken twice, past the threshold
				return nil
			}})
		add(t, q, 1)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		g.mu.Lock()
		alerts := len(g.alerts)
		g.mu.Unlock()
		if st := g.r.Stats(); alerts != 1 || st.Alerts != 1 {
			t.Errorf("OnAlert called %d times, Stats %+v; want one alert of both", alerts, st)
		}
	})
}

// metricStops is a MetricsProvider whose counters stop the reaper.
type metricStops struct {
	r *atomic.Pointer[recovery.Reaper]
}

type stoppingCounter struct {
	r *atomic.Pointer[recovery.Reaper]
}

func (c stoppingCounter) Inc() { _ = c.r.Load().Stop(context.Background()) }

func (p metricStops) NewRescuesMetric(string) sched.CounterMetric  { return stoppingCounter(p) }
func (p metricStops) NewPoisonedMetric(string) sched.CounterMetric { return stoppingCounter(p) }
func (p metricStops) NewAlertsMetric(string) sched.CounterMetric   { return stoppingCounter(p) }

// A metric of the reaper's goroutine that stops the reaper does not wait
// for the look that waits for it, now that metrics run on a goroutine of
// their own.
func TestStopFromAMetric(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var rp atomic.Pointer[recovery.Reaper]
		g := newRig(t, 1, recovery.Config{Metrics: metricStops{&rp}, StallThreshold: -1})
		rp.Store(g.r)
		q := queue[int](g, "q", sched.QueueConfig[int, int]{Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
			if j.Rescues == 0 {
				g.hang()
			}
			return nil
		}})
		id := add(t, q, 1)
		time.Sleep(10 * time.Second)
		synctest.Wait() // a deadlock of the reaper's goroutine fails here
		if e := get(t, q, id); e.State != sched.StateSucceeded || e.Rescues != 1 {
			t.Errorf("entry %v with %d rescues, want succeeded after one", e.State, e.Rescues)
		}
	})
}
