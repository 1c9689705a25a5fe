package bench

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/jobkit/jobkit/distinct"
	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/scope"
)

// floorBacklog is how many jobs the floor's parts keep queued ahead, as
// BenchmarkSched_NoOp's producers do (about 1,024), and floorBatch how many
// they take at once, as sched-b64 does.
const (
	floorBacklog = 1024
	floorBatch   = 64
)

// BenchmarkSched_Floor measures, per job, the work that every job of
// BenchmarkSched_NoOp's sched-b64 does under the lock of its queue's
// in-memory backend, in one goroutine and without the scheduler around it,
// and the scheduler around a backend that does nearly nothing, against
// pond's whole per-job cost in the same run (BenchmarkSched_NoOp's first
// row), named
//
//	Sched_Floor/part=<part>
//
// The parts, each with floorBacklog jobs queued ahead and batches of
// floorBatch:
//
//   - distinct: the FIFO, a distinct.Queue of pointers (Add, TakeAppend in
//     a scope, the scope's close);
//   - clock: the two readings of the clock a job takes, as sched's default
//     clock reads it (the monotonic clock, time.Since);
//   - memory: sched.Memory itself, which holds the FIFO and an index of the
//     live keys for the duplicate check (sched's BenchmarkKeyIndex compares
//     that index with a Go map), without a clock (Add, Take in a scope,
//     Start, Settle, the scope's close): every call is under its one lock,
//     so on any number of cores the backend serves jobs no faster than one
//     per this time;
//   - scheduler: the other side, the scheduler without its backend's
//     work: BenchmarkSched_NoOp's first row for sched-b64 on a nullBackend
//     (a FIFO under a lock, no duplicate check, no states, counts or
//     retention), on all cores, as the row runs;
//   - lean: the same row for leanRunner, the leanest pipeline of the
//     target's shape on a distinct.Queue keyed by the job's key (an add
//     with one clock reading, workers taking floorBatch keys into a scope,
//     one clock reading a run, the scope's close as the settle), without
//     sched's layers around it;
//   - lean-map: the same with a Go map of the live keys and a slice FIFO
//     under one mutex in place of the distinct.Queue and its scope;
//   - pond: BenchmarkSched_NoOp/workers=2×GOMAXPROCS/adds=during/p=1 for
//     pond, the fastest pool.
//
// memory ÷ pond is a lower bound on BenchmarkSched_NoOp's sched ÷ pond
// while the scheduler runs on this backend: the target of 1.5 needs it
// below 1.5 first. scheduler ÷ pond is a lower bound on it for any
// backend: what the scheduler costs around a backend that does nothing.
// lean ÷ pond is what the shape itself costs, deduplication, scope and
// clock included: below 1.5, the target is within reach of a scheduler
// whose layers cost little beside it; lean-map ÷ pond is the same without
// distinct.
func BenchmarkSched_Floor(b *testing.B) {
	b.Run("part=distinct", func(b *testing.B) {
		// Not zero-size: pointers to distinct zero-size values may be
		// equal, and the queue would take them for one item.
		type unit struct{ _ int }
		units := make([]unit, 4*floorBacklog)
		q, err := distinct.New[*unit](distinct.Config{})
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		buf := make([]*unit, 0, floorBatch)
		add := func(i int) {
			if !q.Add(&units[i%len(units)]) {
				b.Fatal("refused")
			}
		}
		floorRounds(b, add, func(s *scope.Scope) {
			got, err := q.TakeAppend(ctx, s, floorBatch, buf[:0])
			if err != nil || len(got) != floorBatch {
				b.Fatalf("took %d: %v", len(got), err)
			}
		})
	})
	b.Run("part=clock", func(b *testing.B) {
		base := time.Now()
		var sink time.Duration
		b.ReportAllocs()
		for range b.N {
			//lint:ignore SA4000 two readings of the clock, as a job takes them
			sink += time.Since(base) - time.Since(base)
		}
		runtime.KeepAlive(sink)
	})
	b.Run("part=memory", func(b *testing.B) {
		ctx := context.Background()
		m := sched.NewMemory[int, int]()
		if err := m.Open(sched.QueueInfo{Name: "floor", Retention: sched.DefaultRetention}); err != nil {
			b.Fatal(err)
		}
		now := time.Now()
		add := func(i int) {
			if _, added, err := m.Add(ctx, sched.NewEntry[int, int]{Key: i, Payload: i, Priority: sched.MinPriority, Now: now}); err != nil || !added {
				b.Fatalf("add %d: %v %v", i, added, err)
			}
		}
		claims := make([]sched.Claim[int, int], 0, floorBatch)
		ok := sched.Outcome{Kind: sched.OutcomeSucceeded, Finished: now}
		floorRounds(b, add, func(s *scope.Scope) {
			cs, err := m.Take(ctx, s, sched.TakeRequest{Now: now, Max: floorBatch}, claims[:0])
			if err != nil || len(cs) != floorBatch {
				b.Fatalf("took %d: %v", len(cs), err)
			}
			for i := range cs {
				if err := m.Start(ctx, &cs[i], now, time.Time{}); err != nil {
					b.Fatal(err)
				}
				if err := m.Settle(ctx, &cs[i], ok); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	b.Run("part=scheduler", func(b *testing.B) {
		runNoOp(b, nullRunner(), 2*runtime.GOMAXPROCS(0), noopMode{producers: 1})
	})
	b.Run("part=lean", func(b *testing.B) {
		runNoOp(b, leanFactory(), 2*runtime.GOMAXPROCS(0), noopMode{producers: 1})
	})
	b.Run("part=lean-map", func(b *testing.B) {
		runNoOp(b, leanMapFactory(), 2*runtime.GOMAXPROCS(0), noopMode{producers: 1})
	})
	b.Run("part=pond", runPond)
}

// nullRunner is sched-b64 on a nullBackend: BenchmarkSched_Floor's
// part=scheduler.
func nullRunner() runnerFactory {
	v := schedVariant{batch: floorBatch, keep: true, null: true}
	return runnerFactory{name: "sched-null", holds: true, new: func(workers int, job func(int)) (jobRunner, error) {
		return newSchedRunner[int](workers, v, nil, job)
	}}
}

// floorRounds adds floorBacklog jobs with add, then times rounds until b.N
// jobs: each adds floorBatch more and calls take with a new scope, which it
// then closes successfully.
func floorRounds(b *testing.B, add func(int), take func(*scope.Scope)) {
	for i := range floorBacklog {
		add(i)
	}
	next := floorBacklog
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += floorBatch {
		for range floorBatch {
			add(next)
			next++
		}
		s := scope.New()
		take(s)
		if err := s.Close(scope.Succeeded()); err != nil {
			b.Fatal(err)
		}
	}
}
