package recovery_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/jobkit/jobkit/internal/logbuf"
	"github.com/jobkit/jobkit/recovery"
	"github.com/jobkit/jobkit/sched"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// quiet discards the logs of the tests' schedulers and reapers.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// recordFunc is a slog.Handler that calls itself with every record: the
// tests' Loggers that panic, hold, stop the reaper or keep what they get.
type recordFunc func(slog.Record)

func (recordFunc) Enabled(context.Context, slog.Level) bool        { return true }
func (f recordFunc) Handle(_ context.Context, r slog.Record) error { f(r); return nil }
func (f recordFunc) WithAttrs([]slog.Attr) slog.Handler            { return f }
func (f recordFunc) WithGroup(string) slog.Handler                 { return f }

// keep retains final entries long enough to look at them.
var keep = sched.Retention{Succeeded: time.Hour, Failed: time.Hour, Cancelled: time.Hour, MaxSucceeded: 1000, MaxFailed: 1000, MaxCancelled: 1000}

const (
	lease    = time.Second
	interval = 100 * time.Millisecond
	grace    = 200 * time.Millisecond
)

// rig is a scheduler with a reaper, both started, stopped at the end of the
// test, and a gate that hung handlers wait on, opened before the stop.
type rig struct {
	t      *testing.T
	s      *sched.Scheduler
	r      *recovery.Reaper
	gate   chan struct{}
	alerts []recovery.Alert
	mu     sync.Mutex
}

func newRig(t *testing.T, workers int, cfg recovery.Config) *rig {
	t.Helper()
	s, err := sched.New(sched.Config{Workers: workers, Loops: 1, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	g := &rig{t: t, s: s, gate: make(chan struct{})}
	if cfg.Interval == 0 {
		cfg.Interval, cfg.Grace = interval, grace
	}
	cfg.OnAlert = func(a recovery.Alert) {
		g.mu.Lock()
		g.alerts = append(g.alerts, a)
		g.mu.Unlock()
	}
	if g.r, err = recovery.New(s, cfg); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := g.r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		g.open()
		if err := g.r.Stop(ctx); err != nil {
			t.Error(err)
		}
		if err := s.Stop(ctx); err != nil {
			t.Error(err)
		}
		synctest.Wait() // released handlers return
	})
	return g
}

// open releases the hung handlers.
func (g *rig) open() {
	select {
	case <-g.gate:
	default:
		close(g.gate)
	}
}

// hang waits for the gate, ignoring ctx, as a deadlocked handler would.
func (g *rig) hang() { <-g.gate }

func queue[T any](g *rig, name string, cfg sched.QueueConfig[int, int]) *sched.Queue[int, int] {
	g.t.Helper()
	if cfg.Lease == 0 {
		cfg.Lease = lease
	}
	if cfg.Retention == nil {
		cfg.Retention = &keep
	}
	q, err := sched.NewQueue(g.s, name, cfg)
	if err != nil {
		g.t.Fatal(err)
	}
	return q
}

func add(t *testing.T, q *sched.Queue[int, int], v int) sched.ID {
	t.Helper()
	id, ok, err := q.Add(context.Background(), v)
	if err != nil || !ok {
		t.Fatalf("Add(%d) = %v, %v", v, ok, err)
	}
	return id
}

func get(t *testing.T, q *sched.Queue[int, int], id sched.ID) sched.Entry[int, int] {
	t.Helper()
	e, err := q.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// A run that neither beats nor returns is rescued inside
// [lease + grace, lease + grace + interval] after it started: its context is
// cancelled then, and the entry runs again at once, without spending an
// attempt.
func TestRescueWindow(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g := newRig(t, 2, recovery.Config{})
		var mu sync.Mutex
		var starts, cancelled []time.Time
		q := queue[int](g, "q", sched.QueueConfig[int, int]{Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
			mu.Lock()
			starts = append(starts, time.Now())
			first := len(starts) == 1
			mu.Unlock()
			context.AfterFunc(ctx, func() {
				mu.Lock()
				cancelled = append(cancelled, time.Now())
				mu.Unlock()
			})
			if first {
				g.hang()
			}
			return nil
		}})
		id := add(t, q, 1)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if len(starts) != 2 || len(cancelled) < 1 {
			t.Fatalf("%d runs, %d cancellations; want the hung run cancelled and one rerun", len(starts), len(cancelled))
		}
		at := cancelled[0].Sub(starts[0])
		if at < lease+grace || at > lease+grace+interval {
			t.Errorf("rescued %v after the start, want within [%v, %v]", at, lease+grace, lease+grace+interval)
		}
		if !starts[1].Equal(cancelled[0]) {
			t.Errorf("the rerun started %v after the rescue, want at once", starts[1].Sub(cancelled[0]))
		}
		e := get(t, q, id)
		if e.State != sched.StateSucceeded || e.Attempts != 1 || e.Rescues != 1 || e.Reruns != 1 {
			t.Errorf("entry %v, %d attempts, %d rescues, %d reruns; want succeeded, 1, 1, 1", e.State, e.Attempts, e.Rescues, e.Reruns)
		}
		if st := g.r.Stats(); st.Rescued != 1 || st.Abandoned != 1 {
			t.Errorf("stats %+v, want one rescue, one abandoned handler", st)
		}
	})
}

// A long run that heartbeats, or whose queue renews it automatically, is
// never rescued; a heartbeat after the lease lapsed, before a rescue,
// still renews it.
func TestHeartbeatsAndAutoRenewKeepARun(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g := newRig(t, 4, recovery.Config{Grace: 500 * time.Millisecond, Interval: time.Second})
		var runs atomic.Int64
		beating := queue[int](g, "beating", sched.QueueConfig[int, int]{Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
			runs.Add(1)
			for range 30 {
				time.Sleep(lease + 200*time.Millisecond) // past the lease, within its grace
				if err := j.Heartbeat(ctx); err != nil {
					return err
				}
			}
			return nil
		}})
		renewed := queue[int](g, "renewed", sched.QueueConfig[int, int]{AutoRenew: true, Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
			runs.Add(1)
			time.Sleep(time.Minute)
			return nil
		}})
		a, b := add(t, beating, 1), add(t, renewed, 1)
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if n := runs.Load(); n != 2 || get(t, beating, a).State != sched.StateSucceeded || get(t, renewed, b).State != sched.StateSucceeded {
			t.Errorf("%d runs, states %v and %v; want 2 runs, both succeeded", n, get(t, beating, a).State, get(t, renewed, b).State)
		}
		if st := g.r.Stats(); st.Rescued != 0 {
			t.Errorf("%d rescues of live runs", st.Rescued)
		}
	})
}

// The result of a rescued run is ignored, whether it comes before or after
// the rerun settles, and whether it is a success or a failure: the rerun's
// counts.
func TestLateResultsAreIgnored(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		late       error // what the rescued run returns
		rerun      error // what the rerun returns
		lateFirst  bool  // the late result comes before the rerun settles
		wantState  sched.State
		wantTrials int
	}{
		{"late success before a failing rerun", nil, sched.Permanent(errors.New("x")), true, sched.StateFailed, 1},
		{"late failure before a succeeding rerun", errors.New("x"), nil, true, sched.StateSucceeded, 1},
		{"late success after a failing rerun", nil, sched.Permanent(errors.New("x")), false, sched.StateFailed, 1},
		{"late failure after a succeeding rerun", sched.Permanent(errors.New("x")), nil, false, sched.StateSucceeded, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				g := newRig(t, 2, recovery.Config{})
				oldGo, rerunGo := make(chan struct{}), make(chan struct{})
				var runs atomic.Int64
				q := queue[int](g, "q", sched.QueueConfig[int, int]{Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
					if runs.Add(1) == 1 {
						<-oldGo // hung until the test lets it return
						return tc.late
					}
					<-rerunGo
					return tc.rerun
				}})
				id := add(t, q, 1)
				time.Sleep(lease + grace + interval)
				synctest.Wait() // rescued; the rerun waits
				if runs.Load() != 2 {
					t.Fatalf("%d runs after the lease lapsed, want the rerun started", runs.Load())
				}
				first, second := oldGo, rerunGo
				if !tc.lateFirst {
					first, second = rerunGo, oldGo
				}
				close(first)
				synctest.Wait()
				close(second)
				synctest.Wait()
				e := get(t, q, id)
				if e.State != tc.wantState || e.Attempts != tc.wantTrials {
					t.Errorf("entry %v with %d attempts, want %v with %d", e.State, e.Attempts, tc.wantState, tc.wantTrials)
				}
				if n := g.r.Stats().Abandoned; n != 0 {
					t.Errorf("%d abandoned handlers after the old run returned", n)
				}
			})
		})
	}
}

// The (N+1)-th rescue poisons an entry.
func TestPoisonAfterMaxRescues(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g := newRig(t, 2, recovery.Config{})
		var runs atomic.Int64
		q := queue[int](g, "q", sched.QueueConfig[int, int]{MaxRescues: 2, Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
			runs.Add(1)
			g.hang()
			return nil
		}})
		id := add(t, q, 1)
		time.Sleep(time.Minute)
		synctest.Wait()
		e := get(t, q, id)
		if runs.Load() != 3 || e.State != sched.StatePoisoned || e.Rescues != 3 || len(e.Errors) != 1 {
			t.Errorf("%d runs, entry %v with %d rescues and errors %v; want 3 runs, poisoned at the third rescue", runs.Load(), e.State, e.Rescues, e.Errors)
		}
		if st := g.r.Stats(); st.Rescued != 3 || st.Poisoned != 1 || st.Abandoned != 3 {
			t.Errorf("stats %+v", st)
		}
	})
}

// With W workers and H handlers that hang, the other jobs keep running on
// W workers: each rescue replaces the lost worker.
func TestHungHandlersDoNotReduceCapacity(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const workers, hung = 3, 5
		g := newRig(t, workers, recovery.Config{})
		var mu sync.Mutex
		running, most := 0, 0
		var done atomic.Int64
		q := queue[int](g, "q", sched.QueueConfig[int, int]{BatchSize: 1, MaxRescues: 100, Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
			if j.Key < hung && j.Rescues == 0 {
				g.hang()
				return nil
			}
			mu.Lock()
			running++
			most = max(most, running)
			mu.Unlock()
			time.Sleep(100 * time.Millisecond)
			mu.Lock()
			running--
			mu.Unlock()
			done.Add(1)
			return nil
		}})
		for i := range 200 {
			add(t, q, i)
		}
		time.Sleep(20 * time.Second)
		synctest.Wait()
		if done.Load() != 200 || most != workers {
			t.Errorf("%d of 200 done, at most %d at once; want all, %d at once", done.Load(), most, workers)
		}
		if n := g.r.Stats().Abandoned; n != hung {
			t.Errorf("%d abandoned handlers, want %d", n, hung)
		}
	})
}

// StopAndCancel abandons runs that do not return in time, and says so;
// when every handler returns, it reports nothing.
func TestStopAndCancelAbandons(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, err := sched.New(sched.Config{Workers: 2, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		gate := make(chan struct{})
		started := make(chan struct{}, 2)
		q, _ := sched.NewQueue(s, "q", sched.QueueConfig[int, int]{Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
			started <- struct{}{}
			if j.Payload == 1 {
				<-gate // ignores ctx
				return nil
			}
			<-ctx.Done()
			return ctx.Err()
		}, BatchSize: 1})
		hung, polite := add(t, q, 1), add(t, q, 2)
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		<-started
		<-started
		stopCtx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if err := s.StopAndCancel(stopCtx); !errors.Is(err, sched.ErrAbandoned) {
			t.Errorf("StopAndCancel = %v, want ErrAbandoned", err)
		}
		for _, id := range []sched.ID{hung, polite} {
			if e := get(t, q, id); e.State != sched.StatePending || e.Attempts != 0 || e.Reruns != 1 {
				t.Errorf("entry %d after the stop: %v, %d attempts, %d reruns; want pending reruns", id, e.State, e.Attempts, e.Reruns)
			}
		}
		if n := s.Inspector().Abandoned(); n != 1 {
			t.Errorf("%d abandoned, want 1", n)
		}
		close(gate)
		synctest.Wait()
		if n := s.Inspector().Abandoned(); n != 0 {
			t.Errorf("%d abandoned after the handler returned, want 0", n)
		}
		if e := get(t, q, hung); e.State != sched.StatePending {
			t.Errorf("the abandoned run's late success changed its entry: %v", e.State)
		}
	})
}

func TestAlerts(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g := newRig(t, 2, recovery.Config{TakenThreshold: 3, StallThreshold: 10})
		flaky := queue[int](g, "flaky", sched.QueueConfig[int, int]{
			Retry: &sched.RetryPolicy{MaxRetries: 5, Base: time.Millisecond},
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				time.Sleep(70 * time.Millisecond) // seen running by the reaper, which looks every 100ms
				return errors.New("again")
			}})
		add(t, flaky, 1)
		stuck := queue[int](g, "stuck", sched.QueueConfig[int, int]{Lease: time.Hour, MaxConcurrency: 1, Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
			g.hang()
			return nil
		}})
		for i := range 20 {
			add(t, stuck, i)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		g.mu.Lock()
		defer g.mu.Unlock()
		var taken, stalled int
		for _, a := range g.alerts {
			switch {
			case a.Kind == recovery.TakenTooOften && a.Queue == "flaky" && a.Taken > 3:
				taken++
			case a.Kind == recovery.Stalled && a.Queue == "stuck" && a.Waiting == 19 && a.Running == 1:
				stalled++
			default:
				t.Errorf("unexpected alert %v", a)
			}
		}
		if taken == 0 || stalled == 0 {
			t.Errorf("%d taken-too-often and %d stalled alerts, want some of each: %v", taken, stalled, g.alerts)
		}
	})
}

func TestBadConfig(t *testing.T) {
	t.Parallel()
	s, err := sched.New(sched.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []recovery.Config{{Interval: time.Microsecond}, {Grace: -1}} {
		if _, err := recovery.New(s, cfg); !errors.Is(err, sched.ErrInvalid) {
			t.Errorf("New(%+v) = %v", cfg, err)
		}
	}
	if _, err := recovery.New(nil, recovery.Config{}); !errors.Is(err, sched.ErrInvalid) {
		t.Errorf("New(nil) = %v", err)
	}
	r, _ := recovery.New(s, recovery.Config{})
	if err := r.Stop(context.Background()); err != nil {
		t.Errorf("Stop without Start = %v", err)
	}
	if err := r.Start(context.Background()); !errors.Is(err, recovery.ErrStopped) {
		t.Errorf("Start after Stop = %v", err)
	}
	if _, err := s.Inspector().Reap(context.Background(), time.Now(), -1); !errors.Is(err, sched.ErrInvalid) {
		t.Errorf("Reap with a negative grace = %v", err)
	}
}

// addRetried adds to a new queue of g a job whose runs take 70 ms and
// fail, retried after 1 ms up to five times: taken more than once, it
// raises the alerts of a TakenThreshold of 1.
func addRetried(g *rig) {
	q := queue[int](g, "q", sched.QueueConfig[int, int]{
		Retry: &sched.RetryPolicy{MaxRetries: 5, Base: time.Millisecond},
		Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
			time.Sleep(70 * time.Millisecond)
			return errors.New("again")
		}})
	add(g.t, q, 1)
}

// An alert hook that panics, or calls runtime.Goexit, is logged; the
// reaper goes on raising alerts, and stops when asked.
func TestPanickingAlertHook(t *testing.T) {
	t.Parallel()
	for name, fault := range map[string]func(){"panic": func() { panic("hook bug") }, "Goexit": runtime.Goexit} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := newRig(t, 2, recovery.Config{TakenThreshold: 1})
				var calls atomic.Int64
				var log logbuf.Buffer
				hooked, err := recovery.New(g.s, recovery.Config{Interval: interval, Grace: grace, TakenThreshold: 1, Logger: log.Logger(),
					OnAlert: func(recovery.Alert) { calls.Add(1); fault() }})
				if err != nil {
					t.Fatal(err)
				}
				ctx := context.Background()
				if err := hooked.Start(ctx); err != nil {
					t.Fatal(err)
				}
				addRetried(g)
				time.Sleep(2 * time.Second)
				synctest.Wait()
				if calls.Load() < 2 {
					t.Errorf("the hook was called %d times, want the reaper to go on after its %s", calls.Load(), name)
				}
				if !strings.Contains(log.String(), "OnAlert "+map[string]string{"panic": "panicked", "Goexit": "called runtime.Goexit"}[name]) {
					t.Errorf("the hook's %s is not logged:\n%s", name, log.String())
				}
				if err := hooked.Stop(ctx); err != nil {
					t.Error(err)
				}
			})
		})
	}
}

// Stopping the reaper from its own alert hook does not deadlock.
func TestStopFromTheAlertHook(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g := newRig(t, 2, recovery.Config{})
		var r *recovery.Reaper
		stopped := make(chan error, 1)
		r, err := recovery.New(g.s, recovery.Config{Interval: interval, Grace: grace, TakenThreshold: 1, Logger: quiet,
			OnAlert: func(recovery.Alert) {
				select {
				case stopped <- r.Stop(context.Background()):
				default:
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		addRetried(g)
		if err := <-stopped; err != nil {
			t.Errorf("Stop from OnAlert = %v", err)
		}
		synctest.Wait()
	})
}

// badMetrics is a recovery.MetricsProvider whose constructors panic, or
// whose counters do, or whose counters call runtime.Goexit.
type badMetrics struct{ inNew, goexit bool }

type panickingCounter struct{ goexit bool }

func (c panickingCounter) Inc() {
	if c.goexit {
		runtime.Goexit()
	}
	panic("counter bug")
}

func (b badMetrics) counter() sched.CounterMetric {
	if b.inNew {
		panic("provider bug")
	}
	return panickingCounter{b.goexit}
}
func (b badMetrics) NewRescuesMetric(string) sched.CounterMetric  { return b.counter() }
func (b badMetrics) NewPoisonedMetric(string) sched.CounterMetric { return b.counter() }
func (b badMetrics) NewAlertsMetric(string) sched.CounterMetric   { return b.counter() }

// A metrics provider or counter that panics, or a counter that calls
// runtime.Goexit, never ends the reaper: the first rescue happens, and
// the second, after the metric failed; then the rerun runs.
func TestPanickingMetricsDoNotEndTheReaper(t *testing.T) {
	t.Parallel()
	for _, bad := range []badMetrics{{inNew: true}, {}, {goexit: true}} {
		synctest.Test(t, func(t *testing.T) {
			g := newRig(t, 2, recovery.Config{Metrics: bad, TakenThreshold: 1})
			var runs atomic.Int64
			q := queue[int](g, "q", sched.QueueConfig[int, int]{Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				if runs.Add(1) <= 2 {
					g.hang()
				}
				return nil
			}})
			id := add(t, q, 1)
			time.Sleep(10 * time.Second)
			synctest.Wait()
			if e := get(t, q, id); e.State != sched.StateSucceeded || e.Rescues != 2 {
				t.Errorf("entry %v with %d rescues, want succeeded after two rescues", e.State, e.Rescues)
			}
			if st := g.r.Stats(); st.Rescued != 2 {
				t.Errorf("stats %+v, want two rescues", st)
			}
		})
	}
}
