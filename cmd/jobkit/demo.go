package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/jobkit/jobkit/distinct"
	"github.com/jobkit/jobkit/scope"
)

// demoConfig sizes the demo.
type demoConfig struct {
	Jobs, Producers, Workers, Batch, FlakyEvery int
	Work                                        time.Duration
}

// demoMax bounds the demo's counts: the demo keeps every job in memory
// and prints a line per failure, so that a mistyped -jobs 99999999999
// is refused at once instead of growing the process until it is killed.
const (
	demoMaxJobs  = 1_000_000
	demoMaxCount = 4096 // producers, workers, batch
	demoMaxWork  = time.Hour
)

// validate returns an error naming the first value out of range, by the
// flag that sets it.
func (c demoConfig) validate() error {
	for _, v := range []struct {
		flag      string
		n, lo, hi int
	}{
		{"jobs", c.Jobs, 1, demoMaxJobs},
		{"producers", c.Producers, 1, demoMaxCount},
		{"workers", c.Workers, 1, demoMaxCount},
		{"batch", c.Batch, 1, demoMaxCount},
	} {
		if v.n < v.lo || v.n > v.hi {
			return fmt.Errorf("invalid configuration: -%s %d: want %d to %d", v.flag, v.n, v.lo, v.hi)
		}
	}
	if c.FlakyEvery < 0 {
		return fmt.Errorf("invalid configuration: -flaky %d: want 0 (none) or more", c.FlakyEvery)
	}
	if c.Work < 0 || c.Work > demoMaxWork {
		return fmt.Errorf("invalid configuration: -work %v: want 0 to %v", c.Work, demoMaxWork)
	}
	return nil
}

// errFlaky is the failure of a flaky job's first attempt.
var errFlaky = errors.New("transient failure")

// runDemo lets producers fill one queue, then workers drain it until every
// accepted submission has completed, writing what happens to out. It fails if
// a submission was lost or completed twice.
func runDemo(ctx context.Context, out io.Writer, cfg demoConfig) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	q, err := distinct.New[string](distinct.Config{})
	if err != nil {
		return err
	}
	var mu sync.Mutex // serialises output and the completion tally
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, format+"\n", args...)
	}
	accepted := make(map[string]int) // submissions Add accepted, per job
	done := make(map[string]int)     // completions, per job
	start := time.Now()

	var producers, workers sync.WaitGroup
	for p := range cfg.Producers {
		producers.Go(func() {
			// Each producer submits every job: a submission of a job that is
			// queued (or in progress) is rejected as a duplicate.
			for i := range cfg.Jobs {
				if i%1024 == 0 && ctx.Err() != nil {
					return
				}
				job := jobName((i + p*cfg.Jobs/cfg.Producers) % cfg.Jobs)
				if q.Add(job) {
					mu.Lock()
					accepted[job]++
					mu.Unlock()
				}
			}
		})
	}
	producers.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	st := q.Stats()
	say("submitted: %d jobs, %d submissions rejected as duplicates", st.Added, st.Rejected)

	var failures int
	runner := &worker{cfg: cfg, seen: make(map[string]bool)}
	for w := range cfg.Workers {
		workers.Go(func() {
			for {
				err := scope.Run(ctx, func(ctx context.Context, s *scope.Scope) error {
					var jobs []string
					// Registered before Take, so it runs after the queue's own
					// finalizer (finalizers run last-in first-out) and sees the
					// failed jobs back in the queue.
					s.Defer(func(e scope.Exit) error {
						if e.Failed() && jobs != nil {
							say("worker %d: %v; queue now %s", w, e.Err(), queueHead(q))
						}
						return nil
					})
					jobs, err := q.Take(ctx, s, cfg.Batch)
					if err != nil {
						return err
					}
					say("worker %d: took %v", w, jobs)
					for i, job := range jobs {
						if err := runner.work(ctx, job); err != nil {
							// The rest of the batch settles with the scope: the
							// failed scope puts it back where it was.
							return fmt.Errorf("%s failed (%w): %v back in place", job, err, jobs[i:])
						}
						if q.Complete(s, job) { // settle this job alone, now
							mu.Lock()
							done[job]++
							mu.Unlock()
						}
					}
					return nil
				})
				switch {
				case err == nil:
				case errors.Is(err, errFlaky):
					mu.Lock()
					failures++
					mu.Unlock()
				case errors.Is(err, distinct.ErrClosed), ctx.Err() != nil:
					return
				default:
					say("worker %d: %v", w, err)
				}
			}
		})
	}

	err = q.Drain(ctx) // close, and wait for the workers to finish everything
	workers.Wait()
	if err != nil {
		return err
	}

	st = q.Stats()
	for i := range cfg.Jobs {
		job := jobName(i)
		if done[job] != accepted[job] {
			return fmt.Errorf("%s: %d submissions accepted but %d completions", job, accepted[job], done[job])
		}
	}
	say("finished: %d jobs completed exactly once; %d failures put %d jobs back in place; %v",
		st.Completed, failures, st.Requeued, time.Since(start).Round(time.Millisecond))
	return nil
}

// queueShown is the longest queue a failure line lists the head of:
// Queued copies the whole queue, under its lock, and a copy per failure
// made the demo quadratic in -jobs.
const queueShown = 64

// queueHead formats the first jobs of q, or only how many it holds if
// that is more than queueShown.
func queueHead(q *distinct.Queue[string]) string {
	if n := q.Len(); n > queueShown {
		return fmt.Sprintf("%d jobs", n)
	}
	return head(q.Queued(), 8)
}

// head formats the first n of jobs, and how many more there are.
func head(jobs []string, n int) string {
	if len(jobs) <= n {
		return fmt.Sprint(jobs)
	}
	return fmt.Sprintf("%v … (%d more)", jobs[:n], len(jobs)-n)
}

func jobName(i int) string { return fmt.Sprintf("job-%02d", i) }

// worker does jobs: each takes cfg.Work, and a flaky job fails the first time
// it runs.
type worker struct {
	cfg  demoConfig
	mu   sync.Mutex
	seen map[string]bool // flaky jobs that have failed once
}

func (w *worker) work(ctx context.Context, job string) error {
	select {
	case <-time.After(w.cfg.Work):
	case <-ctx.Done():
		return ctx.Err()
	}
	var n int
	fmt.Sscanf(job, "job-%d", &n)
	if w.cfg.FlakyEvery == 0 || n%w.cfg.FlakyEvery != w.cfg.FlakyEvery-1 {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen[job] {
		return nil
	}
	w.seen[job] = true
	return errFlaky
}
