package sched_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/governor"
	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// memSampler reads a machine with 2 idle cores and memSampler bytes of
// memory free of 1000.
type memSampler int64

func (m memSampler) Sample(context.Context) (governor.Reading, error) {
	return governor.Reading{CPUCores: 2, MemoryLimit: 1000, MemoryUsed: 1000 - uint64(m), MemoryAvailable: uint64(m)}, nil
}

// startGovernor starts a governor on sampler with a sample a second (so a
// MaxHold of 5 s) and 8 slots, stopped when the test ends.
func startGovernor(t *testing.T, sampler governor.Sampler) *governor.Governor {
	t.Helper()
	g, err := governor.New(governor.Config{Sampler: sampler, Interval: time.Second, MaxCPUPercent: 100, MaxMemoryPercent: 100, Slots: 8, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Stop(context.Background()) })
	return g
}

// Queues whose Weight does not fit the governor's reading do not hold
// every scheduling loop in the governor's line: a queue the governor
// admits is served as the governor's Acquire promises, once the heavy
// waiters' MaxHold (5 s here) is over, whether its job was there before
// the loops began to wait or came after. Before, each of the two loops
// waited in the line for a heavy queue, none asked for the light one
// again, and its job had not run a minute on.
func TestHeavyQueuesDoNotHoldEveryLoop(t *testing.T) {
	for _, late := range []bool{false, true} {
		t.Run(fmt.Sprintf("light job added after the loops wait %v", late), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				g := startGovernor(t, memSampler(400))
				s := must.New(t, sched.Config{Workers: 4, Governor: g, Logger: quiet}) // Loops: 2
				heavy := sched.QueueConfig[int, int]{Handler: nop[int, int], Weight: governor.Weight{Memory: 500}}
				h1 := must.Queue(t, s, "heavy1", heavy)
				h2 := must.Queue(t, s, "heavy2", heavy)
				var runs atomic.Int64
				light := must.Queue(t, s, "light", sched.QueueConfig[int, int]{Handler: sleeper(0, &runs)})
				must.Add(t, h1, 1)
				must.Add(t, h2, 1)
				if late {
					if err := s.Start(ctx); err != nil {
						t.Fatal(err)
					}
					synctest.Wait() // both heavy queues wait in the governor's line
				}
				start := time.Now()
				must.Add(t, light, 1)
				if !late {
					if err := s.Start(ctx); err != nil {
						t.Fatal(err)
					}
				}
				defer func() {
					if err := s.Stop(ctx); err != nil {
						t.Error(err)
					}
				}()
				for runs.Load() == 0 && time.Since(start) < time.Minute {
					time.Sleep(100 * time.Millisecond)
				}
				t.Logf("light job ran after %v", time.Since(start))
				if took := time.Since(start); runs.Load() != 1 || took > 7*time.Second {
					t.Fatalf("the light queue's job ran %d times in %v, want once within MaxHold and two samples (7 s); governor: %v", runs.Load(), took, g.Snapshot())
				}
				for _, h := range []*sched.Queue[int, int]{h1, h2} {
					if c := must.Counts(t, h); c.Pending+c.Awaiting != 1 || c.Succeeded != 0 {
						t.Errorf("%s %+v, want its job still waiting for room", h.Name(), c)
					}
				}
			})
		})
	}
}

// A heavy queue is not starved by a stream of light work that takes the
// room it needs: its batch waits in the governor's line, which holds the
// light batches up for MaxHold (5 s), time enough for those running to
// end. Light jobs hold 200 bytes for a second each, three at a time in
// the 600 free; the heavy batch needs 500, so it runs only once no light
// job runs.
func TestAHeavyQueueIsNotStarvedByLightWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		g := startGovernor(t, memSampler(600))
		s := must.New(t, sched.Config{Workers: 8, Governor: g, Logger: quiet})
		var lightRuns, heavyRuns atomic.Int64
		light := must.Queue(t, s, "light", sched.QueueConfig[int, int]{
			Handler: sleeper(time.Second, &lightRuns), BatchSize: 1, Weight: governor.Weight{Memory: 200}})
		heavy := must.Queue(t, s, "heavy", sched.QueueConfig[int, int]{
			Handler: sleeper(0, &heavyRuns), Weight: governor.Weight{Memory: 500}})
		fill(t, light, 0, 100)
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := s.Stop(ctx); err != nil {
				t.Error(err)
			}
		}()
		time.Sleep(3 * time.Second) // the light jobs fill the room
		synctest.Wait()
		if lightRuns.Load() < 3 {
			t.Fatalf("%d light runs in 3 s, want the room full of them", lightRuns.Load())
		}
		start := time.Now()
		must.Add(t, heavy, 1)
		for heavyRuns.Load() == 0 && time.Since(start) < time.Minute {
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("heavy job ran after %v; light: %d runs", time.Since(start), lightRuns.Load())
		if took := time.Since(start); heavyRuns.Load() != 1 || took > 8*time.Second {
			t.Fatalf("the heavy job ran %d times in %v, want once within MaxHold, a light run and two samples (8 s); governor: %v", heavyRuns.Load(), took, g.Snapshot())
		}
		if c := must.Counts(t, light); c.Pending == 0 {
			t.Fatalf("light %+v: the light work ran out, so the test showed nothing", c)
		}
	})
}

// A governor whose NowFunc panics in, or ends, the goroutine that waits in
// its line for a queue (see the package doc's Admission), as it charges
// the queue's usage on the grant, takes nothing down and strands neither
// the worker reserved for the batch nor a permit: the queue is left alone
// for a second, then its jobs run, on the one worker. The readings refuse
// until the jobs are added, so that the first batch waits in the line.
func TestAGovernorThatFaultsInAnAdmissionStrandsNothing(t *testing.T) {
	t.Parallel()
	for name, fault := range map[string]func(){"panic": func() { panic("NowFunc bug") }, "Goexit": runtime.Goexit} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var faults atomic.Int64
				now := func() time.Time {
					var buf [4096]byte
					if strings.Contains(string(buf[:runtime.Stack(buf[:], false)]), "sched.(*Scheduler).admission") {
						faults.Add(1)
						fault()
					}
					return time.Now()
				}
				sampler := &fakeSampler{}
				sampler.cpu.Store(95)
				g, err := governor.New(governor.Config{Sampler: sampler, Interval: time.Second, MaxCPUPercent: 80, Slots: 4, NowFunc: now, Logger: quiet})
				if err != nil {
					t.Fatal(err)
				}
				ctx := context.Background()
				if err := g.Start(ctx); err != nil {
					t.Fatal(err)
				}
				defer g.Stop(ctx)
				s := newScheduler(t, sched.Config{Workers: 1, Governor: g, Logger: quiet})
				var runs atomic.Int64
				q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Handler: sleeper(0, &runs), BatchSize: 1})
				fill(t, q, 0, 100)
				synctest.Wait() // the first batch waits in the governor's line
				sampler.cpu.Store(10)
				time.Sleep(1500 * time.Millisecond) // the next sample grants it
				synctest.Wait()
				if n := faults.Load(); n != 1 {
					t.Fatalf("the governor faulted %d times granting the waiting batch, want once", n)
				}
				if n := runs.Load(); n != 0 {
					t.Errorf("%d runs within the second the queue is left alone after the fault", n)
				}
				time.Sleep(time.Minute)
				synctest.Wait()
				if n := runs.Load(); n != 100 {
					t.Errorf("%d of 100 runs a minute after the fault: the worker or a permit was stranded", n)
				}
				if snap := g.Snapshot(); snap.SlotsInUse != 0 {
					t.Errorf("%d slots in use once every job ran: a permit was stranded", snap.SlotsInUse)
				}
			})
		})
	}
}
