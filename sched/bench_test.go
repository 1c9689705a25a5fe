package sched_test

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/jobkit/jobkit/sched"
)

// BenchmarkScheduler_NoOp is no-op jobs through the whole scheduler (dedup,
// governor, scope, settle), added by one producer while it runs, a bounded
// distance ahead of the workers: ns/op is per job. allocs/job counts every
// allocation in the timed window. bench/ has the side-by-side version
// against worker pools (BenchmarkSched_NoOp).
func BenchmarkScheduler_NoOp(b *testing.B) {
	for _, batch := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("workers=4/batch=%d", batch), func(b *testing.B) {
			ctx := context.Background()
			s, err := sched.New(sched.Config{Workers: 4})
			if err != nil {
				b.Fatal(err)
			}
			var done atomic.Int64
			finished := make(chan struct{})
			n := int64(b.N)
			q, err := sched.NewQueue(s, "noop", sched.QueueConfig[int, int]{
				BatchSize: batch, Retention: &sched.Retention{},
				Handler: func(context.Context, *sched.Job[int, int]) error {
					if done.Add(1) == n {
						close(finished)
					}
					return nil
				},
			})
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Start(ctx); err != nil {
				b.Fatal(err)
			}
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			b.ResetTimer()
			for i := range b.N {
				for int64(i)-done.Load() > 1024 { // stay a bounded distance ahead
					runtime.Gosched()
				}
				if _, _, err := q.Add(ctx, i); err != nil {
					b.Fatal(err)
				}
			}
			<-finished
			b.StopTimer()
			runtime.ReadMemStats(&m1)
			b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(b.N), "allocs/job")
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
			if err := s.Stop(ctx); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkQueue_AddPaused measures what an add costs its caller, with the
// queue paused so that nothing runs: Add one job at a time against AddAll
// of 64, per job, with the queue emptied between rounds of 1,024 (outside
// the timer), for integer keys (the payload) and string keys
// "ns/name-<payload>" made by the queue's Key function.
func BenchmarkQueue_AddPaused(b *testing.B) {
	for _, all := range []bool{false, true} {
		call := "call=Add"
		if all {
			call = "call=AddAll"
		}
		b.Run("keys=int/"+call, func(b *testing.B) { benchAddPaused[int](b, all, nil) })
		b.Run("keys=string/"+call, func(b *testing.B) {
			benchAddPaused(b, all, func(v int) string { return "ns/name-" + strconv.Itoa(v) })
		})
	}
}

func benchAddPaused[K comparable](b *testing.B, all bool, key func(int) K) {
	const round, chunk = 1024, 64
	ctx := context.Background()
	s, err := sched.New(sched.Config{Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	q, err := sched.NewQueue(s, "q", sched.QueueConfig[int, K]{Key: key, Handler: func(context.Context, *sched.Job[int, K]) error { return nil }})
	if err != nil {
		b.Fatal(err)
	}
	q.Pause()
	ids := make([]int, chunk)
	next := 0
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(round, b.N-done)
		if all {
			for i := 0; i < n; i += chunk {
				m := min(chunk, n-i)
				for j := range m {
					ids[j] = next + j
				}
				next += m
				if _, err := q.AddAll(ctx, ids[:m]); err != nil {
					b.Fatal(err)
				}
			}
		} else {
			for range n {
				if _, _, err := q.Add(ctx, next); err != nil {
					b.Fatal(err)
				}
				next++
			}
		}
		done += n
		b.StopTimer()
		if _, err := s.Inspector().Delete(ctx, sched.Query{Queues: []string{"q"}}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}
