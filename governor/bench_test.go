package governor_test

import (
	"context"
	"sync"
	"testing"

	"github.com/jobkit/jobkit/governor"
	"golang.org/x/sync/semaphore"
)

// BenchmarkGovernor_TryAcquireRelease measures a granted TryAcquire and its
// Release from every P at once, against the same pair on
// golang.org/x/sync/semaphore.Weighted, a mutex-guarded counter that hands out
// no per-grant record. Run it with -cpu=2 -count=6 -benchmem and compare with
// benchstat.
func BenchmarkGovernor_TryAcquireRelease(b *testing.B) {
	const slots = 1 << 20 // never the limit
	b.Run("impl=governor", func(b *testing.B) {
		g, err := governor.New(governor.Config{Slots: slots, Sampler: &fakeSampler{r: reading(10, 100)}})
		if err != nil {
			b.Fatal(err)
		}
		if err := g.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { g.Stop(context.Background()) })
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				p, ok := g.TryAcquire("", governor.Weight{})
				if !ok {
					b.Error("TryAcquire refused")
					return
				}
				p.Release()
			}
		})
	})
	b.Run("impl=x-sync-semaphore", func(b *testing.B) {
		sem := semaphore.NewWeighted(slots)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if !sem.TryAcquire(1) {
					b.Error("TryAcquire refused")
					return
				}
				sem.Release(1)
			}
		})
	})
}

// BenchmarkGovernor_TryAcquire measures a TryAcquire and Release pair from
// every P at once, against two baselines that only count slots: a buffered
// channel and a mutex-guarded counter.
func BenchmarkGovernor_TryAcquire(b *testing.B) {
	const slots = 1 << 20 // never the limit
	newGovernor := func(b *testing.B, r governor.Reading) *governor.Governor {
		g, err := governor.New(governor.Config{Slots: slots, Sampler: &fakeSampler{r: r}})
		if err != nil {
			b.Fatal(err)
		}
		if err := g.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { g.Stop(context.Background()) })
		return g
	}
	for _, bm := range []struct{ name, key string }{{"impl=governor/key=none", ""}, {"impl=governor/key=queue", "queue"}} {
		b.Run(bm.name, func(b *testing.B) {
			g := newGovernor(b, reading(10, 100))
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					p, ok := g.TryAcquire(bm.key, governor.Weight{})
					if !ok {
						b.Error("TryAcquire refused")
						return
					}
					p.Release()
				}
			})
		})
	}
	b.Run("impl=governor/refused", func(b *testing.B) {
		// The check alone: over the CPU limit, TryAcquire is one atomic load.
		g := newGovernor(b, reading(95, 100))
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, ok := g.TryAcquire("", governor.Weight{}); ok {
					b.Error("TryAcquire admitted over the CPU limit")
					return
				}
			}
		})
	})
	b.Run("impl=governor/weight=memory", func(b *testing.B) {
		g := newGovernor(b, reading(10, 100))
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				// The room is 800 bytes until the next sample: most tries fail
				// once it is spent, as a full governor's do.
				p, _ := g.TryAcquire("", governor.Weight{Memory: 1})
				p.Release()
			}
		})
	})
	b.Run("impl=chan", func(b *testing.B) {
		sem := make(chan struct{}, slots)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				select {
				case sem <- struct{}{}:
					<-sem
				default:
					b.Error("channel full")
					return
				}
			}
		})
	})
	b.Run("impl=mutex", func(b *testing.B) {
		var mu sync.Mutex
		free := slots
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				mu.Lock()
				ok := free > 0
				if ok {
					free--
				}
				mu.Unlock()
				if ok {
					mu.Lock()
					free++
					mu.Unlock()
				}
			}
		})
	})
}

// BenchmarkGovernor_Acquire measures an uncontended Acquire and Release pair,
// the path that takes the Governor's lock.
func BenchmarkGovernor_Acquire(b *testing.B) {
	g, err := governor.New(governor.Config{Slots: 1, Sampler: &fakeSampler{r: reading(10, 100)}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		p, err := g.Acquire(ctx, "", governor.Weight{})
		if err != nil {
			b.Fatal(err)
		}
		p.Release()
	}
}

// BenchmarkSystemSampler_Sample measures one sample of this machine: its
// wall time, and with -benchmem its allocations.
func BenchmarkSystemSampler_Sample(b *testing.B) {
	var s governor.SystemSampler
	ctx := context.Background()
	if _, err := s.Sample(ctx); err != nil { // locate the cgroups first
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Sample(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
