package recovery_test

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/recovery"
	"github.com/jobkit/jobkit/sched"
)

// stallable starts s with a queue "stuck" of one worker whose handler hangs
// until gate is closed, adds two entries, and returns once the first runs:
// two looks of a reaper with StallThreshold 1 then see the queue stalled
// (one running, one waiting, none ended) and raise one alert.
func stallable(t *testing.T, s *sched.Scheduler, gate <-chan struct{}) {
	t.Helper()
	started := make(chan struct{}, 2)
	q, err := sched.NewQueue(s, "stuck", sched.QueueConfig[int, int]{
		Lease: time.Hour,
		Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
			started <- struct{}{}
			<-gate
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, ok, err := q.Add(context.Background(), i); err != nil || !ok {
			t.Fatalf("Add(%d) = %v, %v", i, ok, err)
		}
	}
	<-started
}

// callsBack is a metrics provider that calls its reaper's Stats as it makes
// a queue's metrics, as a provider that seeds its counters might.
type callsBack struct {
	r      *atomic.Pointer[recovery.Reaper]
	called chan struct{}
}

func (c callsBack) counter() sched.CounterMetric {
	_ = c.r.Load().Stats()
	select {
	case c.called <- struct{}{}:
	default:
	}
	return nil
}
func (c callsBack) NewRescuesMetric(string) sched.CounterMetric  { return c.counter() }
func (c callsBack) NewPoisonedMetric(string) sched.CounterMetric { return c.counter() }
func (c callsBack) NewAlertsMetric(string) sched.CounterMetric   { return c.counter() }

// A MetricsProvider that calls the reaper (Stats) while it makes a queue's
// metrics must not deadlock it: the provider used to be called with the
// reaper's lock held, so the reaper's goroutine, and every later Stats,
// blocked for good. It runs in real time, bounded: a goroutine blocked on a
// mutex is not durably blocked for synctest. (The scheduler's clock is
// stepped to make the Interval the stall needs pass.)
func TestMetricsProviderMayCallTheReaper(t *testing.T) {
	t.Parallel()
	sys, err := sched.New(sched.Config{Logger: quiet}) // never started: for its clock
	if err != nil {
		t.Fatal(err)
	}
	clock := &steppedClock{sys: sys.Clock()}
	s, err := sched.New(sched.Config{Workers: 1, Loops: 1, Logger: quiet, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{})
	t.Cleanup(func() {
		close(gate)
		if err := s.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	var rp atomic.Pointer[recovery.Reaper]
	p := callsBack{r: &rp, called: make(chan struct{}, 1)}
	r, err := recovery.New(s, recovery.Config{Interval: time.Minute, StallThreshold: 1, TakenThreshold: -1, Metrics: p, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	rp.Store(r)
	stallable(t, s, gate)

	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Look(context.Background())
		clock.step(time.Minute)      // a whole Interval without a run ending
		r.Look(context.Background()) // stalled: an alert, counted
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Look has not returned after 10s: the provider's call of Stats deadlocked the reaper")
	}
	select {
	case <-p.called:
	default:
		t.Fatal("the provider was not asked for the stalled queue's metrics")
	}
	if st := r.Stats(); st.Alerts != 1 {
		t.Errorf("stats %+v, want one alert", st)
	}
}

// faultyHandler is a slog handler that panics, or calls runtime.Goexit,
// for every record.
func faultyHandler(goexit bool) slog.Handler {
	return recordFunc(func(slog.Record) {
		if goexit {
			runtime.Goexit()
		}
		panic("handler bug")
	})
}

// A Config.Logger whose handler panics or calls runtime.Goexit loses its
// record and nothing else: the reaper's look goes on to the alert's hook.
// Before, the reaper logged on its own goroutine, so such a handler ended
// the look before OnAlert ran: a panic crashed the process (the reaper's
// goroutine does not recover), a Goexit lost the rest of the look.
func TestLoggerFaultsAreContained(t *testing.T) {
	t.Parallel()
	for _, goexit := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			s, err := sched.New(sched.Config{Workers: 1, Loops: 1, Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			gate := make(chan struct{})
			defer func() {
				close(gate)
				if err := s.Stop(context.Background()); err != nil {
					t.Error(err)
				}
			}()
			var alerts atomic.Int64
			r, err := recovery.New(s, recovery.Config{
				Interval: time.Minute, StallThreshold: 1, TakenThreshold: -1,
				Logger:  slog.New(faultyHandler(goexit)),
				OnAlert: func(recovery.Alert) { alerts.Add(1) },
			})
			if err != nil {
				t.Fatal(err)
			}
			stallable(t, s, gate)
			returned, recovered := false, any(nil)
			done := make(chan struct{})
			go func() {
				defer close(done)
				defer func() { recovered = recover() }()
				r.Look(context.Background())
				time.Sleep(time.Minute)      // a whole Interval without a run ending
				r.Look(context.Background()) // stalled: an alert, logged
				returned = true
			}()
			<-done
			if !returned {
				t.Fatalf("Look did not return (goexit %v): recovered %v", goexit, recovered)
			}
			if n := alerts.Load(); n != 1 {
				t.Errorf("OnAlert called %d times, want 1", n)
			}
		})
	}
}

// A Reaper not made by New (the zero value, or a literal) refuses to start
// with an error instead of starting a goroutine that crashes the process on
// a nil scheduler, and its other methods do nothing.
func TestZeroReaper(t *testing.T) {
	t.Parallel()
	var r recovery.Reaper
	if err := r.Start(context.Background()); !errors.Is(err, sched.ErrInvalid) {
		t.Errorf("Start of a zero Reaper = %v, want an error wrapping sched.ErrInvalid", err)
	}
	r.Look(context.Background())
	if st := r.Stats(); st != (recovery.Stats{}) {
		t.Errorf("Stats of a zero Reaper = %+v, want zero", st)
	}
	if err := r.Stop(context.Background()); err != nil {
		t.Errorf("Stop of a zero Reaper = %v", err)
	}
}

// stopsReaper is a slog handler that stops the reaper in r at the first
// record and sends Stop's result on stopped. Its Stop gives up after a
// minute (of the bubble's time), so that a Stop that waits for itself
// fails the test.
func stopsReaper(r *atomic.Pointer[recovery.Reaper], stopped chan<- error) slog.Handler {
	return recordFunc(func(slog.Record) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		select {
		case stopped <- r.Load().Stop(ctx):
		default:
		}
	})
}

// A Stop from the Logger, for a record of the reaper's goroutine, returns
// at once, as a Stop from OnAlert does, although the record is handled on
// a goroutine of its own: the reaper's goroutine waits for it.
func TestStopFromTheLogger(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g := newRig(t, 2, recovery.Config{})
		var rp atomic.Pointer[recovery.Reaper]
		stopped := make(chan error, 1)
		r, err := recovery.New(g.s, recovery.Config{Interval: interval, Grace: grace, TakenThreshold: 1, Logger: slog.New(stopsReaper(&rp, stopped))})
		if err != nil {
			t.Fatal(err)
		}
		rp.Store(r)
		if err := r.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		addRetried(g)
		if err := <-stopped; err != nil {
			t.Errorf("Stop from the Logger = %v", err)
		}
		synctest.Wait()
	})
}

// steppedClock is the system clock, ahead by what step added, with the
// system clock's timers (those of sys, a scheduler's default clock).
type steppedClock struct {
	ahead atomic.Int64
	sys   sched.Clock
}

func (c *steppedClock) step(d time.Duration)  { c.ahead.Add(int64(d)) }
func (c *steppedClock) Now() time.Time        { return time.Now().Add(time.Duration(c.ahead.Load())) }
func (c *steppedClock) NewTimer() sched.Timer { return c.sys.NewTimer() }
