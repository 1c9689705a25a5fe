package props

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobkit/jobkit/sched"
)

// TestSchedulerStress runs thousands of jobs through three queues (one with
// a cap, one grouped, one rate-limited) from several producers, with random
// failures, panics, permanent failures, snoozes, reruns and runtime.Goexit
// in the handlers, then stops the scheduler while work is still queued.
// Under -race it checks that no key runs twice at once, that no cap is
// exceeded, that no two entries of a group run at once, and conservation:
// every accepted add is, after Stop, in exactly one state of its queue.
func TestSchedulerStress(t *testing.T) {
	t.Parallel()
	jobs := 6000
	if testing.Short() {
		jobs = 1500
	}
	ctx := context.Background()
	s, err := sched.New(sched.Config{Workers: 16, Loops: 2})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		running  = map[string]int{}
		inGroup  = map[string]int{}
		problems []string
		capped   atomic.Int64
		ran      atomic.Int64
		quarter  = make(chan struct{}) // closed at the jobs/4-th run
	)
	const cap = 3
	handler := func(queue string, grouped bool) sched.Handler[int, int] {
		return func(ctx context.Context, j *sched.Job[int, int]) error {
			k := fmt.Sprintf("%s/%d", queue, j.Key)
			mu.Lock()
			if running[k]++; running[k] > 1 {
				problems = append(problems, k+" runs twice at once")
			}
			if grouped && j.Group != "" {
				if inGroup[j.Group]++; inGroup[j.Group] > 1 {
					problems = append(problems, "group "+j.Group+" runs twice at once")
				}
			}
			mu.Unlock()
			if queue == "capped" {
				if n := capped.Add(1); n > cap {
					mu.Lock()
					problems = append(problems, fmt.Sprintf("%d capped runs at once", n))
					mu.Unlock()
				}
				defer capped.Add(-1)
			}
			defer func() {
				mu.Lock()
				running[k]--
				if grouped && j.Group != "" {
					inGroup[j.Group]--
				}
				mu.Unlock()
			}()
			if ran.Add(1) == int64(jobs)/4 {
				close(quarter)
			}
			if rand.IntN(4) == 0 {
				runtime.Gosched()
			}
			switch r := rand.IntN(100); {
			case r < 10:
				return errors.New("flaky")
			case r < 13:
				panic("handler panic")
			case r < 15:
				return sched.Permanent(errors.New("bad"))
			case r < 18:
				return sched.Snooze(time.Millisecond)
			case r < 20:
				return sched.Rerun(errors.New("reset"))
			case r < 21:
				runtime.Goexit()
			}
			return nil
		}
	}
	retry := sched.RetryPolicy{MaxRetries: 2, Base: time.Millisecond}
	keep := sched.Retention{Succeeded: time.Hour, MaxSucceeded: 1 << 20, Failed: time.Hour, MaxFailed: 1 << 20, Cancelled: time.Hour, MaxCancelled: 1 << 20}
	type queue = *sched.Queue[int, int]
	var queues []queue
	for _, cfg := range []struct {
		name    string
		grouped bool
		cap     int
		rate    float64
	}{{"capped", false, cap, 0}, {"grouped", true, 0, 0}, {"limited", false, 0, 20000}} {
		qc := sched.QueueConfig[int, int]{
			Handler: handler(cfg.name, cfg.grouped), MaxConcurrency: cfg.cap, Rate: cfg.rate,
			Retry: &retry, Retention: &keep, BatchSize: 4,
		}
		if cfg.grouped {
			qc.Group = func(k int) string { return fmt.Sprint("g", k%7) }
		}
		q, err := sched.NewQueue(s, cfg.name, qc)
		if err != nil {
			t.Fatal(err)
		}
		queues = append(queues, q)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	accepted := make([]atomic.Int64, len(queues))
	var producers sync.WaitGroup
	for p := range 4 {
		producers.Go(func() {
			for i := p; i < jobs; i += 4 {
				qi := i % len(queues)
				var opts []sched.AddOption
				if i%10 == 0 {
					opts = append(opts, sched.After(time.Duration(i%5)*time.Millisecond))
				}
				if _, ok, err := queues[qi].Add(ctx, i/len(queues)%500, opts...); err != nil {
					t.Error(err)
					return
				} else if ok {
					accepted[qi].Add(1)
				}
			}
		})
	}
	producers.Wait()
	// Let a good part run, then stop mid-flight. The bounds only turn a
	// stall into a failure instead of a hung test binary.
	select {
	case <-quarter:
	case <-time.After(time.Minute):
		t.Fatalf("stalled: %d of %d runs in a minute", ran.Load(), jobs/4)
	}
	stopCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := s.Stop(stopCtx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems[:min(len(problems), 5)] {
		t.Error(p)
	}
	for i, q := range queues {
		c, err := q.Counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c.Awaiting != 0 || c.Running != 0 {
			t.Errorf("%s: %+v after Stop: awaiting or running entries left", q.Name(), c)
		}
		if total := c.Live() + c.Retained(); total != int(accepted[i].Load()) {
			t.Errorf("%s: %d accepted adds, %d entries (%+v)", q.Name(), accepted[i].Load(), total, c)
		}
	}
	t.Logf("%d runs", ran.Load())
}
