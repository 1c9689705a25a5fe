package sched_test

import (
	"cmp"
	"context"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// TestRetentionSoak runs 10,000,000 jobs (-short: 300,000, kept 50ms)
// through a queue that keeps succeeded entries for a second, and checks that the heap stays
// bounded: what a second of jobs holds, whatever the number of jobs. The
// live heap (after a collection, so that a machine too busy for the
// collector to keep up does not count as growth) is sampled every
// twentieth of the jobs; the peak over the last third of the
// run may not exceed the peak over the middle third by more than a quarter
// and 16 MB, for the noise of a small heap (the first third is the
// warm-up, the first second of retention), the middle's peak scaled up
// first by the entries held, if the last third held more: a second of jobs
// is more jobs when they run faster. It logs
// the peak.
func TestRetentionSoak(t *testing.T) {
	n, ttl := 10_000_000, time.Second
	if testing.Short() {
		n, ttl = 300_000, 50*time.Millisecond
	}
	ctx := context.Background()
	s, err := sched.New(sched.Config{Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop(ctx)
	var done atomic.Int64
	finished := make(chan struct{})
	q, err := sched.NewQueue(s, "soak", sched.QueueConfig[int, int]{
		BatchSize: 64,
		Retention: &sched.Retention{Succeeded: ttl, MaxSucceeded: 1 << 30},
		Handler: func(context.Context, *sched.Job[int, int]) error {
			if done.Add(1) == int64(n) {
				close(finished)
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// A sample is the heap in use and the entries the queue holds then.
	type sample struct{ heap, held uint64 }
	var samples []sample
	start := time.Now()
	for i := range n {
		for int64(i)-done.Load() > 4096 {
			time.Sleep(50 * time.Microsecond) // pace the producer: the test is a load, not a race
		}
		if _, _, err := q.Add(ctx, i); err != nil {
			t.Fatal(err)
		}
		if i%(n/20) == n/20-1 {
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			c := must.Counts(t, q)
			samples = append(samples, sample{m.HeapInuse, uint64(c.Succeeded + c.Pending + c.Awaiting + c.Running)})
		}
	}
	<-finished // closed by the last handler before it returns
	took := time.Since(start)
	if err := s.Stop(ctx); err != nil { // waits for that run to settle
		t.Fatal(err)
	}
	c := must.Counts(t, q)
	third := len(samples) / 3
	peak := func(ss []sample) sample {
		return slices.MaxFunc(ss, func(a, b sample) int { return cmp.Compare(a.heap, b.heap) })
	}
	middle, last := peak(samples[third:2*third]), peak(samples[2*third:])
	// What a second of jobs holds depends on how fast they ran: a faster
	// last third holds more entries, and may use more heap for them.
	budget := middle.heap
	if last.held > middle.held && middle.held > 0 {
		budget = budget / middle.held * last.held
	}
	t.Logf("%d jobs in %v (%.0f/s): heap in use peaks at %d MB holding %d entries in the middle third, %d MB holding %d in the last; %d kept, %d expired",
		n, took.Round(time.Millisecond), float64(n)/took.Seconds(), middle.heap>>20, middle.held, last.heap>>20, last.held, c.Succeeded, c.Expired)
	if c.Added != n || c.Succeeded+c.Expired != n || last.heap > budget+budget/4+16<<20 {
		t.Errorf("the heap grows with the jobs (%d MB, then %d MB for %d and %d entries), or jobs were lost: %+v", middle.heap>>20, last.heap>>20, middle.held, last.held, c)
	}
}
