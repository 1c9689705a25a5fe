package sched_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
	"github.com/jobkit/jobkit/scope"
)

// invariants tracks what handlers see at once.
type invariants struct {
	mu        sync.Mutex
	t         *testing.T
	activeID  map[int]int
	activeGrp map[string]int
	running   int
	cap       int // 0: unchecked
	quiet     bool
	runs      map[int]int
	bad       []string
}

func newInvariants(t *testing.T, cap int) *invariants {
	return &invariants{t: t, activeID: map[int]int{}, activeGrp: map[string]int{}, runs: map[int]int{}, cap: cap}
}

func (v *invariants) failf(format string, args ...any) {
	if len(v.bad) < 20 {
		v.bad = append(v.bad, fmt.Sprintf(format, args...))
	}
}

func (v *invariants) enter(p int, group string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.quiet {
		v.failf("payload %d started while the queue was paused (and quiet)", p)
	}
	v.runs[p]++
	if v.activeID[p]++; v.activeID[p] > 1 {
		v.failf("payload %d runs twice at once", p)
	}
	if group != "" {
		if v.activeGrp[group]++; v.activeGrp[group] > 1 {
			v.failf("group %q has two runs at once", group)
		}
	}
	if v.running++; v.cap > 0 && v.running > v.cap {
		v.failf("%d runs at once, cap %d", v.running, v.cap)
	}
}

func (v *invariants) leave(p int, group string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.activeID[p]--
	if group != "" {
		v.activeGrp[group]--
	}
	v.running--
}

func (v *invariants) report() {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, b := range v.bad {
		v.t.Error(b)
	}
}

func groupOf(p int) string {
	if p%3 == 0 {
		return ""
	}
	return fmt.Sprintf("g%d", p%5)
}

// Handlers of a grouped, capped queue, with retries, snoozes, reruns and
// panics, while the queue is paused, resumed and rate-limited at random:
// no entry runs twice at once, no group has two runs at once, the cap
// holds, nothing starts while paused, and every entry ends.
func TestRandomManagementKeepsTheInvariants(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { stress(t, seed) })
	}
}

func stress(t *testing.T, seed uint64) {
	synctest.Test(t, func(t *testing.T) {
		s := must.New(t, sched.Config{Workers: 6, Loops: 3, Logger: quiet})
		inv := newInvariants(t, 3)
		var rmu sync.Mutex
		rng := rand.New(rand.NewPCG(seed, 2))
		rnd := func(n int) int { rmu.Lock(); defer rmu.Unlock(); return rng.IntN(n) }
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			MaxConcurrency: 3,
			BatchSize:      4,
			Group:          groupOf,
			Retry:          &sched.RetryPolicy{MaxRetries: 2, Base: 10 * time.Millisecond},
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				if j.Group != groupOf(j.Payload) {
					inv.mu.Lock()
					inv.failf("job %d group %q, want %q", j.Payload, j.Group, groupOf(j.Payload))
					inv.mu.Unlock()
				}
				inv.enter(j.Payload, j.Group)
				defer inv.leave(j.Payload, j.Group)
				time.Sleep(time.Duration(1+rnd(20)) * time.Millisecond)
				switch rnd(10) {
				case 0:
					return errors.New("retry me")
				case 1:
					return sched.Snooze(time.Duration(rnd(30)) * time.Millisecond)
				case 2:
					if j.Reruns < 3 {
						return sched.Rerun(errors.New("again"))
					}
				case 3:
					panic(fmt.Sprintf("boom %d", j.Payload))
				}
				return nil
			},
		})
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		const n = 300
		for i := range n {
			must.Add(t, q, i, sched.WithPriority(1+i%7))
		}
		for round := range 60 {
			switch rnd(6) {
			case 4, 5:
				c := rnd(5) // 0: no bound
				inv.mu.Lock()
				old := inv.cap
				raise := c == 0 || (old != 0 && c > old)
				if raise {
					inv.cap = c
				}
				inv.mu.Unlock()
				if err := q.SetMaxConcurrency(c); err != nil {
					t.Fatal(err)
				}
				if !raise {
					synctest.Wait()
					inv.mu.Lock()
					inv.cap = c
					inv.mu.Unlock()
				}
			case 0:
				q.Pause()
				synctest.Wait()
				inv.mu.Lock()
				inv.quiet = true
				inv.mu.Unlock()
				time.Sleep(50 * time.Millisecond)
				synctest.Wait()
				inv.mu.Lock()
				inv.quiet = false
				inv.mu.Unlock()
				q.Resume()
			case 1:
				if err := q.SetRate(float64(rnd(200)+1), rnd(4)+1); err != nil {
					t.Fatal(err)
				}
			case 2:
				if err := q.SetRate(0, 0); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(time.Duration(rnd(40)) * time.Millisecond)
			_ = round
		}
		q.Resume()
		_ = q.SetRate(0, 0)
		time.Sleep(time.Minute)
		synctest.Wait()
		c := must.Counts(t, q)
		if c.Live() != 0 || c.Added != n || c.Retained()+c.Expired+c.Deleted != n {
			t.Errorf("counts %+v, want every one of %d entries final", c, n)
		}
		t.Logf("counts %+v", c)
		inv.report()
		if err := s.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

// The latency metric observes one wait per run started, until that start:
// an entry that runs second in its batch, after a run of ten seconds, waited
// ten seconds. Before, every claim of a batch was observed at the batch's
// dispatch, as having waited no time at all.
func TestLatencyIsUntilTheStartOfTheRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newGauges()
		s := must.New(t, sched.Config{Workers: 1, Metrics: r, Logger: quiet})
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			BatchSize: 2,
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				time.Sleep(10 * time.Second)
				return nil
			},
		})
		must.Add(t, q, 1)
		must.Add(t, q, 2)
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if err := s.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		if lat := r.observations("latency"); len(lat) != 2 || lat[1] < 10 {
			t.Errorf("latencies %v s, want two, the second at least 10 s (it started 10 s after its add)", lat)
		}
	})
}

// The latency metric observes runs, not dispatches: an entry of a batch
// that never starts (the queue was paused as the batch ran) is observed
// once, when it runs later. Before, it was observed at each dispatch: more
// observations than runs.
func TestLatencyIsObservedOncePerRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newGauges()
		s := must.New(t, sched.Config{Workers: 1, Metrics: r, Logger: quiet})
		var q *sched.Queue[int, int]
		runs := 0
		q = must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			BatchSize: 4,
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				runs++
				if runs == 1 {
					q.Pause()
				}
				return nil
			},
		})
		for i := range 4 {
			must.Add(t, q, i)
		}
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		q.Resume()
		time.Sleep(time.Minute)
		synctest.Wait()
		if err := s.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		if lat := r.observations("latency"); runs != 4 || len(lat) != runs {
			t.Errorf("%d runs, %d latency observations; want 4 of each", runs, len(lat))
		}
	})
}

// The package doc: "Every method of a Scheduler, Queue, Inspector or Job
// that takes a context returns an error wrapping ErrInvalid for a nil one
// and the context's error for one that is done." Before, Job.Progress and
// Job.Heartbeat of a live run with a done context returned nil (and
// renewed the lease, recorded the progress); those of a Job not the
// scheduler's returned ErrStale for a nil context.
func TestJobMethodsRefuseANilOrDoneContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := must.New(t, sched.Config{Workers: 1, Logger: quiet})
		done, cancel := context.WithCancel(context.Background())
		cancel()
		var got []string
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				if err := j.Heartbeat(done); !errors.Is(err, context.Canceled) {
					got = append(got, fmt.Sprintf("Heartbeat(done) = %v, want context.Canceled", err))
				}
				if err := j.Progress(done, sched.Progress{Done: 1, Total: 2}); !errors.Is(err, context.Canceled) {
					got = append(got, fmt.Sprintf("Progress(done) = %v, want context.Canceled", err))
				}
				return nil
			},
		})
		must.Add(t, q, 1)
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if err := s.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, g := range got {
			t.Error(g)
		}
		var j sched.Job[int, int]
		//lint:ignore SA1012 the nil context is the point
		if err := j.Heartbeat(nil); !errors.Is(err, sched.ErrInvalid) {
			t.Errorf("zero Job's Heartbeat(nil) = %v, want ErrInvalid", err)
		}
		//lint:ignore SA1012 the nil context is the point
		if err := j.Progress(nil, sched.Progress{}); !errors.Is(err, sched.ErrInvalid) {
			t.Errorf("zero Job's Progress(nil) = %v, want ErrInvalid", err)
		}
	})
}

// QueueOf of a Scheduler not made by New is an error wrapping ErrInvalid.
// Before, that of a nil one panicked (a nil dereference of s.mu), and that
// of the zero Scheduler returned ErrUnknownQueue.
func TestQueueOfASchedulerNotMadeByNew(t *testing.T) {
	for name, s := range map[string]*sched.Scheduler{"nil": nil, "zero": {}} {
		func() {
			defer func() {
				if v := recover(); v != nil {
					t.Errorf("QueueOf of a %s Scheduler panicked: %v", name, v)
				}
			}()
			if _, err := sched.QueueOf[int, int](s, "q"); !errors.Is(err, sched.ErrInvalid) {
				t.Errorf("QueueOf of a %s Scheduler: %v, want ErrInvalid", name, err)
			}
		}()
	}
}

// After a Stop whose ctx ended and a Start refused with ErrStopped, a later
// Stop waits again, as the doc says. Before, the refused Start set the
// scheduler's started flag to false (s.started = !stopped), so that the
// later Stop believed the scheduler never started and returned at once,
// while a handler still ran.
func TestARefusedStartLeavesALaterStopWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := must.New(t, sched.Config{Workers: 1, Logger: quiet})
		entered, release := make(chan struct{}), make(chan struct{})
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				close(entered)
				<-release
				return nil
			},
		})
		must.Add(t, q, 1)
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		<-entered
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if err := s.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Stop with a handler running past its ctx: %v, want DeadlineExceeded", err)
		}
		cancel()
		if err := s.Start(context.Background()); !errors.Is(err, sched.ErrStopped) {
			t.Fatalf("Start after Stop: %v, want ErrStopped", err)
		}
		stopped := make(chan error, 1)
		go func() { stopped <- s.Stop(context.Background()) }()
		synctest.Wait()
		select {
		case err := <-stopped:
			t.Errorf("Stop returned (%v) while a handler still runs; want it to wait for it", err)
			close(release)
		default:
			close(release)
			if err := <-stopped; err != nil {
				t.Error(err)
			}
		}
		// Let the scheduler's goroutines end, so that the bubble can.
		if err := s.Stop(context.Background()); err != nil {
			t.Error(err)
		}
		synctest.Wait()
	})
}

// Start called by a handler while a Stop from outside drains the
// scheduler returns ErrStopped at once, as Add does. Before, it waited for
// the lock that Stop holds while it waits for that handler: a deadlock,
// and Stop never returned.
func TestStartFromAHandlerDuringStopReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := must.New(t, sched.Config{Workers: 1, Logger: quiet})
		entered, proceed := make(chan struct{}), make(chan struct{})
		startErr := make(chan error, 1)
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				close(entered)
				<-proceed
				startErr <- s.Start(context.Background())
				return nil
			},
		})
		must.Add(t, q, 1)
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		<-entered
		stopped := make(chan error, 1)
		go func() { stopped <- s.Stop(context.Background()) }()
		synctest.Wait() // Stop holds the lifecycle lock and waits for the handler
		close(proceed)
		select {
		case err := <-stopped:
			if err != nil {
				t.Error(err)
			}
			if err := <-startErr; !errors.Is(err, sched.ErrStopped) {
				t.Errorf("Start from a handler during Stop: %v, want ErrStopped", err)
			}
		case <-time.After(time.Hour):
			t.Fatal("Stop has not returned in an hour: the handler's Start waits for Stop's lock, Stop for the handler")
		}
	})
}

// hangingDuration is a metrics provider whose work-duration metric calls
// hang (once armed); the rest record nothing.
type hangingDuration struct {
	*gauges
	entered chan struct{}
	once    sync.Once
	release chan struct{}
}

type hangingObs struct{ h *hangingDuration }

func (o hangingObs) Observe(float64) {
	o.h.once.Do(func() { close(o.h.entered) })
	<-o.h.release
}

func (h *hangingDuration) NewWorkDurationMetric(string) sched.HistogramMetric { return hangingObs{h} }

// A work-duration metric that hangs "holds its worker as a hung handler
// does, and no lock: StopAndCancel and a rescue abandon its run" (package
// doc), also when the run it observes ended the worker's goroutine
// (runtime.Goexit in the handler). Before, the metric was called on that
// way out after the batch was finished and unlisted: nothing abandoned
// it, so with another handler hung too, StopAndCancel abandoned that one
// and then waited, unbounded, for every worker, the one stuck in the
// metric included: it never returned, though its context ended.
func TestAHangingMetricAfterAGoexitLetsStopAndCancelReturn(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	h := &hangingDuration{gauges: newGauges(), entered: make(chan struct{}), release: release}
	s := must.New(t, sched.Config{Workers: 2, Metrics: h, Logger: quiet})
	hung := make(chan struct{})
	q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
		BatchSize: 1,
		Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
			if j.Payload == 1 {
				runtime.Goexit()
			}
			close(hung)
			<-release // ignores ctx
			return nil
		},
	})
	must.Add(t, q, 1)
	must.Add(t, q, 2)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-h.entered
	<-hung
	if err := stopAndCancelSoon(t, s); !errors.Is(err, sched.ErrAbandoned) {
		t.Errorf("StopAndCancel = %v, want ErrAbandoned", err)
	}
}

// aheadBackend hands out claims whose ReadyAt is an hour ahead of the
// clock, as a backend with a skewed clock would.
type aheadBackend struct{ *sched.Memory[int, int] }

func (b aheadBackend) Take(ctx context.Context, s *scope.Scope, r sched.TakeRequest, dst []sched.Claim[int, int]) ([]sched.Claim[int, int], error) {
	n := len(dst)
	dst, err := b.Memory.Take(ctx, s, r, dst)
	for i := n; i < len(dst); i++ {
		dst[i].ReadyAt = r.Now.Add(time.Hour)
	}
	return dst, err
}

// A ReadyAt ahead of the run's start is a wait of 0, not a negative one.
func TestLatencyIsNeverNegative(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newGauges()
		s := must.New(t, sched.Config{Workers: 1, Metrics: r, Logger: quiet})
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Handler: nop[int, int], Backend: aheadBackend{sched.NewMemory[int, int]()}})
		must.Add(t, q, 1)
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if err := s.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		if lat := r.observations("latency"); len(lat) != 1 || lat[0] != 0 {
			t.Errorf("latencies %v, want one of 0", lat)
		}
	})
}
