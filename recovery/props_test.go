package recovery_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"github.com/jobkit/jobkit/governor"
	"github.com/jobkit/jobkit/recovery"
	"github.com/jobkit/jobkit/sched"
)

// behaviour is what one run of a job does.
type behaviour uint8

const (
	finish    behaviour = iota // returns nil at once
	fail                       // returns an error
	panicking                  // panics
	hang                       // blocks, ignoring its context, until the test ends
	beat                       // runs for a while, beating every half lease
	silent                     // runs for a while without beating
	numBehaviours
)

// watch checks, at the start of every run, that the key's previous run,
// if its handler has not returned, lost its claim: its lease lapsed (plus
// the grace) and its generation is stale.
type watch struct {
	mu       sync.Mutex
	problems []string
	prev     map[int]*runState
}

type runState struct {
	job      *sched.Job[int, int]
	leaseEnd time.Time // of its last heartbeat or start
}

func (w *watch) start(ctx context.Context, j *sched.Job[int, int]) *runState {
	w.mu.Lock()
	defer w.mu.Unlock()
	if p := w.prev[j.Key]; p != nil {
		now := time.Now()
		if now.Before(p.leaseEnd.Add(grace)) {
			w.problems = append(w.problems, fmt.Sprintf("key %d rerun at %v, before its last run's lease and grace ended at %v", j.Key, now, p.leaseEnd.Add(grace)))
		}
		if err := p.job.Heartbeat(ctx); !errors.Is(err, sched.ErrStale) {
			w.problems = append(w.problems, fmt.Sprintf("key %d rerun while its last run can still beat: %v", j.Key, err))
		}
	}
	r := &runState{job: j, leaseEnd: time.Now().Add(lease)}
	w.prev[j.Key] = r
	return r
}

func (w *watch) beat(ctx context.Context, r *runState) {
	if err := r.job.Heartbeat(ctx); err == nil {
		w.mu.Lock()
		r.leaseEnd = time.Now().Add(lease)
		w.mu.Unlock()
	}
}

func (w *watch) end(k int, r *runState) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.prev[k] == r {
		delete(w.prev, k)
	}
}

// TestRescueProperty runs random jobs whose runs beat, hang, take their
// time, fail or panic, under a reaper, and checks that a new run of an
// entry starts only after the previous run's lease lapsed and its
// generation went stale, that every entry ends, and conservation.
func TestRescueProperty(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(rt *rapid.T) {
		rapid.SyncTest(rt, func(rt *rapid.T) {
			jobs := rapid.IntRange(1, 12).Draw(rt, "jobs")
			workers := rapid.IntRange(1, 4).Draw(rt, "workers")
			scripts := make([][]behaviour, jobs)
			durations := make([][]time.Duration, jobs)
			for k := range scripts {
				n := rapid.IntRange(1, 6).Draw(rt, "runs")
				for range n {
					scripts[k] = append(scripts[k], behaviour(rapid.IntRange(0, int(numBehaviours)-1).Draw(rt, "behaviour")))
					durations[k] = append(durations[k], time.Duration(rapid.IntRange(0, 8).Draw(rt, "quarter leases"))*lease/4)
				}
			}
			ctx := context.Background()
			s, err := sched.New(sched.Config{Workers: workers, Loops: 1, Logger: quiet})
			if err != nil {
				rt.Fatal(err)
			}
			r, err := recovery.New(s, recovery.Config{Interval: interval, Grace: grace})
			if err != nil {
				rt.Fatal(err)
			}
			gate := make(chan struct{})
			w := &watch{prev: map[int]*runState{}}
			var runs sync.Map // key → *atomic.Int64
			q, err := sched.NewQueue(s, "q", sched.QueueConfig[int, int]{
				Lease: lease, MaxRescues: 2, Retention: &keep,
				Retry: &sched.RetryPolicy{MaxRetries: 3, Base: lease},
				Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
					state := w.start(ctx, j)
					defer w.end(j.Key, state)
					n, _ := runs.LoadOrStore(j.Key, new(atomic.Int64))
					i := int(n.(*atomic.Int64).Add(1)) - 1
					script := scripts[j.Key]
					b, d := finish, time.Duration(0)
					if i < len(script) {
						b, d = script[i], durations[j.Key][i]
					}
					switch b {
					case fail:
						return errors.New("fails")
					case panicking:
						panic("boom")
					case hang:
						<-gate
					case beat:
						for end := time.Now().Add(d); time.Now().Before(end); {
							time.Sleep(lease / 2)
							w.beat(ctx, state)
						}
					case silent:
						time.Sleep(d)
					}
					return nil
				},
			})
			if err != nil {
				rt.Fatal(err)
			}
			for k := range jobs {
				if _, _, err := q.Add(ctx, k); err != nil {
					rt.Fatal(err)
				}
			}
			if err := s.Start(ctx); err != nil {
				rt.Fatal(err)
			}
			if err := r.Start(ctx); err != nil {
				rt.Fatal(err)
			}
			time.Sleep(2 * time.Minute)
			c, _ := q.Counts(ctx)
			close(gate)
			synctest.Wait()
			r.Stop(ctx)
			s.Stop(ctx)
			w.mu.Lock()
			defer w.mu.Unlock()
			for _, p := range w.problems {
				rt.Error(p)
			}
			if c.Live() != 0 || c.Added != jobs || c.Added != c.Live()+c.Retained()+c.Expired+c.Deleted {
				rt.Errorf("counts %+v after 2 minutes: entries left live, or conservation broken", c)
			}
		})
	})
}

var chaosJobs = flag.Int("chaos.jobs", 2000, "jobs in TestChaosSoak (the issue's soak is 10000; more for a longer run)")

// TestChaosSoak runs jobs of which 10% fail, 1% panic and 0.5% hang, under
// a governor that switches between admitting and refusing, with a reaper,
// and checks that every job ends succeeded, failed or poisoned, that no
// entry ever has two live runs at once (a rescued run is not live), and
// conservation. It prints a one-line report.
func TestChaosSoak(t *testing.T) {
	t.Parallel()
	n := *chaosJobs
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sampler := &switching{}
		g, err := governor.New(governor.Config{Sampler: sampler, Interval: time.Second, Slots: 8, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Start(ctx); err != nil {
			t.Fatal(err)
		}
		s, err := sched.New(sched.Config{Workers: 8, Governor: g, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		var alerts atomic.Int64
		r, err := recovery.New(s, recovery.Config{Interval: interval, Grace: grace, OnAlert: func(recovery.Alert) { alerts.Add(1) }})
		if err != nil {
			t.Fatal(err)
		}
		gate := make(chan struct{})
		// A run is live while its generation is current: it can still beat.
		// A rescued run is not live, though its handler may hang on.
		var (
			mu       sync.Mutex
			current  = map[int]*sched.Job[int, int]{}
			overlaps int
			problems []string
		)
		rnd := rand.New(rand.NewPCG(1, 2))
		fate := make([]int, n) // drawn before the start: handlers run in many goroutines
		for i := range fate {
			fate[i] = rnd.IntN(1000)
		}
		q, err := sched.NewQueue(s, "chaos", sched.QueueConfig[int, int]{
			Lease: lease, MaxRescues: 3, Retention: &sched.Retention{Succeeded: time.Hour, MaxSucceeded: n, Failed: time.Hour, MaxFailed: n},
			Retry: &sched.RetryPolicy{MaxRetries: 2, Base: 100 * time.Millisecond}, BatchSize: 4,
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				mu.Lock()
				if prev := current[j.Key]; prev != nil {
					if err := prev.Heartbeat(ctx); !errors.Is(err, sched.ErrStale) {
						overlaps++
						problems = append(problems, fmt.Sprintf("key %d started while its last run is live (%v)", j.Key, err))
					}
				}
				current[j.Key] = j
				mu.Unlock()
				defer func() {
					mu.Lock()
					if current[j.Key] == j {
						delete(current, j.Key)
					}
					mu.Unlock()
				}()
				time.Sleep(time.Duration(fate[j.Key]%50) * time.Millisecond)
				switch f := (fate[j.Key] + 7*(j.Attempt+j.Rescues)) % 1000; {
				case f < 100:
					return errors.New("flaky")
				case f < 110:
					panic("boom")
				case f < 115:
					<-gate
				}
				return nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if _, _, err := q.Add(ctx, i); err != nil {
				t.Fatal(err)
			}
		}
		start := time.Now()
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if err := r.Start(ctx); err != nil {
			t.Fatal(err)
		}
		for {
			time.Sleep(time.Second)
			if c, _ := q.Counts(ctx); c.Live() == 0 {
				break
			}
		}
		took := time.Since(start)
		c, _ := q.Counts(ctx)
		st := r.Stats()
		close(gate)
		synctest.Wait()
		r.Stop(ctx)
		s.Stop(ctx)
		g.Stop(ctx)
		mu.Lock()
		defer mu.Unlock()
		for _, p := range problems[:min(len(problems), 5)] {
			t.Error(p)
		}
		if c.Succeeded+c.Failed+c.Poisoned != n || c.Added != n {
			t.Errorf("counts %+v: not every job ended succeeded, failed or poisoned", c)
		}
		t.Logf("chaos: %d jobs in %v of fake time: %d succeeded, %d failed, %d poisoned; %d rescued, %d alerts, %d refusing samples; concurrent live runs of one entry: %d",
			n, took.Round(time.Second), c.Succeeded, c.Failed, c.Poisoned, st.Rescued, alerts.Load(), sampler.spells.Load(), overlaps)
	})
}

// switching is a sampler whose CPU reading switches between over and under
// the limit every few seconds.
type switching struct {
	n      atomic.Int64
	spells atomic.Int64
}

func (s *switching) Sample(context.Context) (governor.Reading, error) {
	cpu := 10.0
	if s.n.Add(1)%5 < 2 {
		cpu = 95
		s.spells.Add(1)
	}
	return governor.Reading{CPUPercent: cpu, CPUCores: 2}, nil
}
