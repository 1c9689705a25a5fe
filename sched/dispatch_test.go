package sched_test

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/governor"
	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// sleeper returns a handler that takes d of (fake) time and counts its runs.
func sleeper(d time.Duration, runs *atomic.Int64) sched.Handler[int, int] {
	return func(ctx context.Context, j *sched.Job[int, int]) error {
		runs.Add(1)
		time.Sleep(d)
		return nil
	}
}

// fill adds n entries to q, keys from base on.
func fill(t *testing.T, q *sched.Queue[int, int], base, n int) {
	t.Helper()
	for i := range n {
		must.Add(t, q, base+i)
	}
}

// Two saturated queues with priorities 3:1 share the workers 3:1, whatever
// the batch size.
func TestFairnessFollowsPriorities(t *testing.T) {
	t.Parallel()
	for _, batch := range []int{1, 16} {
		synctest.Test(t, func(t *testing.T) {
			s := newScheduler(t, sched.Config{Workers: 2, Loops: 2})
			var a, b atomic.Int64
			qa := must.Queue(t, s, "a", sched.QueueConfig[int, int]{Handler: sleeper(10*time.Millisecond, &a), Priority: 3, BatchSize: batch})
			qb := must.Queue(t, s, "b", sched.QueueConfig[int, int]{Handler: sleeper(10*time.Millisecond, &b), Priority: 1, BatchSize: batch})
			fill(t, qa, 0, 10_000)
			fill(t, qb, 0, 10_000)
			time.Sleep(20 * time.Second) // about 4,000 runs
			qa.Pause()
			qb.Pause()
			ratio := float64(a.Load()) / float64(b.Load())
			t.Logf("batch %d: a ran %d, b ran %d: %.3f", batch, a.Load(), b.Load(), ratio)
			if ratio < 2.7 || ratio > 3.3 {
				t.Errorf("batch %d: shares %d:%d = %.2f, want 3 ± 10%%", batch, a.Load(), b.Load(), ratio)
			}
			synctest.Wait()
		})
	}
}

// Queues of equal priority share slot-time, not runs: the queue whose jobs
// are shorter runs more of them, as much more as they are shorter.
func TestFairnessCountsSlotTime(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 2})
		var long, short atomic.Int64
		ql := must.Queue(t, s, "long", sched.QueueConfig[int, int]{Handler: sleeper(40*time.Millisecond, &long), BatchSize: 1})
		qs := must.Queue(t, s, "short", sched.QueueConfig[int, int]{Handler: sleeper(10*time.Millisecond, &short), BatchSize: 1})
		fill(t, ql, 0, 10_000)
		fill(t, qs, 0, 10_000)
		time.Sleep(20 * time.Second)
		ql.Pause()
		qs.Pause()
		timeLong := time.Duration(long.Load()) * 40 * time.Millisecond
		timeShort := time.Duration(short.Load()) * 10 * time.Millisecond
		ratio := float64(timeLong) / float64(timeShort)
		t.Logf("long %d runs (%v), short %d runs (%v): slot-time ratio %.3f", long.Load(), timeLong, short.Load(), timeShort, ratio)
		if ratio < 0.9 || ratio > 1.1 {
			t.Errorf("slot-time long:short = %.2f, want 1 ± 10%%", ratio)
		}
		synctest.Wait()
	})
}

// A low-priority queue is never starved: with priorities 100:1, one worker
// and runs of equal length d, the low queue runs at least once every
// (100/1 + 2)·d.
func TestLowPriorityIsNotStarved(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const d = 10 * time.Millisecond
		s := newScheduler(t, sched.Config{Workers: 1, Loops: 1})
		var high, low atomic.Int64
		var mu sync.Mutex
		var last time.Time
		var gap time.Duration
		qh := must.Queue(t, s, "high", sched.QueueConfig[int, int]{Handler: sleeper(d, &high), Priority: 100, BatchSize: 1})
		ql := must.Queue(t, s, "low", sched.QueueConfig[int, int]{Priority: 1, BatchSize: 1,
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				mu.Lock()
				if !last.IsZero() {
					gap = max(gap, time.Since(last))
				}
				last = time.Now()
				mu.Unlock()
				low.Add(1)
				time.Sleep(d)
				return nil
			}})
		fill(t, qh, 0, 20_000)
		fill(t, ql, 0, 1_000)
		time.Sleep(30 * time.Second)
		qh.Pause()
		ql.Pause()
		synctest.Wait()
		bound := (100/1 + 2) * d
		t.Logf("high %d, low %d runs; longest wait of the low queue %v (bound %v)", high.Load(), low.Load(), gap, bound)
		if low.Load() < 20 || gap > bound {
			t.Errorf("low queue ran %d times, longest gap %v, want at least 20 runs and gaps ≤ %v", low.Load(), gap, bound)
		}
	})
}

// fakeSampler reports a CPU reading the test sets.
type fakeSampler struct{ cpu atomic.Int64 }

func (f *fakeSampler) Sample(context.Context) (governor.Reading, error) {
	return governor.Reading{CPUPercent: float64(f.cpu.Load()), CPUCores: 2}, nil
}

// While the governor refuses, nothing is dispatched and nothing spins: every
// goroutine of the scheduler blocks (synctest.Wait returns only when all
// goroutines of the bubble are durably blocked). Work resumes at the first
// sample that admits.
func TestNothingRunsWhileTheGovernorRefuses(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sampler := &fakeSampler{}
		sampler.cpu.Store(95)
		g, err := governor.New(governor.Config{Sampler: sampler, Interval: time.Second, MaxCPUPercent: 80, Slots: 4})
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer g.Stop(ctx)
		s := newScheduler(t, sched.Config{Workers: 4, Governor: g})
		var runs atomic.Int64
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Handler: sleeper(0, &runs)})
		fill(t, q, 0, 100)
		synctest.Wait() // all blocked: the loops wait in the governor's line
		time.Sleep(10 * time.Second)
		if n := runs.Load(); n != 0 {
			t.Fatalf("%d runs while the governor refused", n)
		}
		if c := must.Counts(t, q); c.Pending != 100 {
			t.Fatalf("counts %+v while refused, want 100 pending", c)
		}
		sampler.cpu.Store(10)
		time.Sleep(time.Second) // the next sample admits
		synctest.Wait()
		if n := runs.Load(); n != 100 {
			t.Errorf("%d runs once the governor admits, want 100", n)
		}
	})
}

// A queue limited to r runs a second runs r·t ± burst in t seconds.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rate  float64
		burst int
	}{{10, 5}, {0.5, 1}, {200, 20}} {
		synctest.Test(t, func(t *testing.T) {
			s := newScheduler(t, sched.Config{Workers: 8})
			var runs atomic.Int64
			q := must.Queue(t, s, "limited", sched.QueueConfig[int, int]{Handler: sleeper(0, &runs), Rate: tc.rate, Burst: tc.burst})
			fill(t, q, 0, 10_000)
			const secs = 20
			time.Sleep(secs * time.Second)
			q.Pause()
			want := tc.rate * secs
			got := float64(runs.Load())
			t.Logf("rate %v burst %d: %v runs in %ds, r·t = %v", tc.rate, tc.burst, got, secs, want)
			if got < want-float64(tc.burst) || got > want+float64(tc.burst) {
				t.Errorf("rate %v burst %d: %v runs in %d s, want %v ± %d", tc.rate, tc.burst, got, secs, want, tc.burst)
			}
			// SetRate takes effect: lifting the limit runs the rest.
			if err := q.SetRate(0, 0); err != nil {
				t.Fatal(err)
			}
			q.Resume()
			synctest.Wait()
			if n := runs.Load(); n != 10_000 {
				t.Errorf("%d runs after lifting the limit, want all 10,000", n)
			}
		})
	}
}

// 100,000 delayed entries run at their times, each within a millisecond,
// on the scheduler's goroutines alone: no goroutine or timer per entry. The
// test is not parallel, so that it counts goroutines alone.
func TestDelayedEntriesRunOnTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 100_000
		s := newScheduler(t, sched.Config{Workers: 4})
		start := time.Now()
		var late atomic.Int64 // most lateness seen, ns
		var runs atomic.Int64
		q := must.Queue(t, s, "delayed", sched.QueueConfig[int, int]{
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				due := start.Add(time.Duration(j.Payload) * time.Millisecond)
				d := int64(time.Since(due))
				if d < 0 {
					t.Errorf("entry %d ran %v early", j.Payload, -time.Duration(d))
				}
				for {
					old := late.Load()
					if d <= old || late.CompareAndSwap(old, d) {
						break
					}
				}
				runs.Add(1)
				return nil
			},
		})
		before := runtime.NumGoroutine()
		for i := range n {
			delay := time.Duration((i*7919)%(100*1000)) * time.Millisecond // spread over 100 s, not in order
			must.Add(t, q, int(delay/time.Millisecond), sched.At(start.Add(delay)))
		}
		// NumGoroutine counts the whole process, where a goroutine of an
		// earlier test may still be ending: only an increase is the
		// scheduler's.
		if g := runtime.NumGoroutine(); g > before {
			t.Errorf("%d goroutines after adding %d delayed entries, %d before", g, n, before)
		}
		time.Sleep(101 * time.Second)
		synctest.Wait()
		if runs.Load() != n || time.Duration(late.Load()) > time.Millisecond {
			t.Errorf("%d of %d ran, the latest %v late; want all, within 1ms", runs.Load(), n, time.Duration(late.Load()))
		}
	})
}
