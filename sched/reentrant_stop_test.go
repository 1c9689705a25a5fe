package sched_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/governor"
	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
	"github.com/jobkit/jobkit/scope"
)

// A handler that calls Stop while another Stop waits for it does not
// deadlock: both return, and the scheduler is stopped.
func TestStopFromAHandlerDuringStop(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := must.New(t, sched.Config{Workers: 2})
		started := make(chan struct{})
		var inner error
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
			close(started)
			time.Sleep(time.Second) // the outer Stop is waiting for this run
			inner = s.Stop(context.Background())
			return nil
		}})
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		must.Add(t, q, 1)
		<-started
		var wg sync.WaitGroup
		var outer error
		wg.Go(func() { outer = s.Stop(context.Background()) })
		wg.Wait()
		synctest.Wait()
		if inner != nil || outer != nil {
			t.Errorf("Stop from the handler = %v, the outer Stop = %v; want both nil", inner, outer)
		}
		if _, _, err := q.Add(context.Background(), 2); err == nil {
			t.Error("Add after Stop succeeded")
		}
	})
}

// stopOnce calls s.Stop the first time it is called, and records what it
// returned in *got.
func stopOnce(s **sched.Scheduler, got *error, once *sync.Once) func() {
	return func() { once.Do(func() { *got = (*s).Stop(context.Background()) }) }
}

// takeStops is a backend whose Take calls stop.
type takeStops struct {
	sched.Backend[int, int]
	stop func()
}

func (b *takeStops) Take(ctx context.Context, s *scope.Scope, r sched.TakeRequest, dst []sched.Claim[int, int]) ([]sched.Claim[int, int], error) {
	b.stop()
	return b.Backend.Take(ctx, s, r, dst)
}

// freedSampler reads 400 bytes free of 1000 until at, and 1,000 from then
// on: a heavy queue's batch waits in the governor's line until then.
type freedSampler struct{ at time.Time }

func (f *freedSampler) Sample(ctx context.Context) (governor.Reading, error) {
	if time.Now().Before(f.at) {
		return memSampler(400).Sample(ctx)
	}
	return memSampler(1000).Sample(ctx)
}

// promoteStops is a backend whose Promote calls stop.
type promoteStops struct {
	sched.Backend[int, int]
	stop func()
}

func (b *promoteStops) Promote(ctx context.Context, now time.Time) (time.Time, bool, error) {
	b.stop()
	return b.Backend.Promote(ctx, now)
}

// A dependency that calls Stop from one of the scheduler's goroutines (a
// retry policy's Delay, a metric in a worker or in the gauges' loop, a
// backend's Take in a loop or in an admission, a Clock in any of them, the Logger) does not deadlock: its
// Stop returns nil, the scheduler stops and drains, and no goroutine is
// left (synctest.Test fails if one is blocked).
func TestStopFromADependency(t *testing.T) {
	t.Parallel()
	type rig struct {
		cfg  sched.Config
		qcfg sched.QueueConfig[int, int]
		arm  func() // if not nil, called once the scheduler started
		// heavy: the queue's Weight does not fit the governor's reading
		// for the first 10 s, so its first batch waits for admission on a
		// goroutine of its own.
		heavy bool
	}
	cases := map[string]func(stop func()) rig{
		"Delay": func(stop func()) rig {
			return rig{qcfg: sched.QueueConfig[int, int]{Retry: &sched.RetryPolicy{MaxRetries: 1, Delay: func(int, error) time.Duration {
				stop()
				return time.Second
			}}}}
		},
		"metric in a worker": func(stop func()) rig {
			p := &panicky{which: "duration", fault: func() { stop(); runtime.Goexit() }}
			p.armed.Store(true)
			return rig{cfg: sched.Config{Metrics: p}}
		},
		"metric in the gauges' loop": func(stop func()) rig {
			p := &panicky{which: "unfinished", fault: func() { stop(); runtime.Goexit() }}
			p.armed.Store(true)
			return rig{cfg: sched.Config{Metrics: p}}
		},
		"backend Promote (the timekeeper)": func(stop func()) rig {
			return rig{qcfg: sched.QueueConfig[int, int]{Backend: &promoteStops{sched.NewMemory[int, int](), stop}}}
		},
		"Logger (a backend's panic logged by a loop)": func(stop func()) rig {
			return rig{
				cfg:  sched.Config{Logger: slog.New(onRecord(func(slog.Record) { stop() }))},
				qcfg: sched.QueueConfig[int, int]{Backend: &faulty{Backend: sched.NewMemory[int, int]()}},
			}
		},
		"backend Take": func(stop func()) rig {
			return rig{qcfg: sched.QueueConfig[int, int]{Backend: &takeStops{sched.NewMemory[int, int](), stop}}}
		},
		"backend Take on an admission's goroutine": func(stop func()) rig {
			return rig{heavy: true, qcfg: sched.QueueConfig[int, int]{Backend: &takeStops{sched.NewMemory[int, int](), stop}}}
		},
	}
	for k := int64(1); k <= 12; k++ {
		cases[fmt.Sprintf("Clock call %d", k)] = func(stop func()) rig {
			c := &brokenClock{fault: stop}
			return rig{cfg: sched.Config{Clock: c}, arm: func() { c.exitAt.Store(k) }}
		}
	}
	for name, make := range cases {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var (
					s    *sched.Scheduler
					got  error = errors.New("Stop not called")
					once sync.Once
				)
				r := make(stopOnce(&s, &got, &once))
				r.cfg.Workers = 2
				if r.cfg.Logger == nil {
					r.cfg.Logger = quiet
				}
				if r.heavy {
					r.cfg.Governor = startGovernor(t, &freedSampler{at: time.Now().Add(10 * time.Second)})
					r.qcfg.Weight = governor.Weight{Memory: 500}
				}
				s = must.New(t, r.cfg)
				r.qcfg.Handler = func(context.Context, *sched.Job[int, int]) error {
					time.Sleep(time.Second)
					return errors.New("fails")
				}
				q := must.Queue(t, s, "q", r.qcfg)
				if err := s.Start(context.Background()); err != nil {
					t.Fatal(err)
				}
				if r.arm != nil {
					synctest.Wait()
					r.arm()
				}
				go q.Add(context.Background(), 1) // on a goroutine of its own: the Clock may stop in it
				go q.Add(context.Background(), 3, sched.After(time.Second))
				time.Sleep(time.Minute)
				synctest.Wait()
				if got != nil {
					t.Errorf("Stop from the %s = %v, want nil", name, got)
				}
				if _, _, err := q.Add(context.Background(), 2); !errors.Is(err, sched.ErrStopped) {
					t.Errorf("Add after the Stop = %v, want ErrStopped", err)
				}
				if got != nil { // the Stop did not happen: clean up
					s.Stop(context.Background())
				}
				// Else no Stop from outside: the drain alone must end every
				// goroutine, which synctest.Test checks.
			})
		})
	}
}

// After a handler stopped the scheduler, a StopAndCancel from outside still
// cancels the handlers still running and returns within its context: the
// handler's Stop does not hold the scheduler while it drains.
func TestStopAndCancelAfterAHandlersStop(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := must.New(t, sched.Config{Workers: 2})
		inner := make(chan error, 1)
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{BatchSize: 1, Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
			if j.Payload == 1 {
				time.Sleep(time.Second) // job 2 is running by then
				inner <- s.Stop(context.Background())
				return nil
			}
			<-ctx.Done() // only StopAndCancel ends it
			return ctx.Err()
		}})
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		must.Add(t, q, 1)
		must.Add(t, q, 2)
		if err := <-inner; err != nil {
			t.Errorf("Stop from the handler = %v", err)
		}
		synctest.Wait() // the handler's stop has done all it does without waiting
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.StopAndCancel(ctx); err != nil {
			t.Errorf("StopAndCancel after the handler's Stop = %v, want nil", err)
		}
	})
}
