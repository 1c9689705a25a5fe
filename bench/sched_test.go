package bench

import (
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// noopMode is one adds=/p= pair of BenchmarkSched_NoOp.
type noopMode struct {
	// before: every job is added before the timer starts, the queue held
	// (paused); the timer runs while the scheduler works the backlog off.
	// Otherwise producers add while the jobs run, at most about 1,024
	// ahead of them.
	before    bool
	producers int
	// ranges: producer p of P adds the payloads [p·n/P, (p+1)·n/P) of the
	// round's n, in order (IDs from producers that each own a range).
	// Otherwise producer p adds p, p+P, p+2P, …, so that together they add
	// the payloads roughly in order.
	ranges bool
}

func (m noopMode) String() string {
	adds := "during"
	if m.before {
		adds = "before"
	}
	s := name("adds=%s/p=%d", adds, m.producers)
	if m.ranges {
		s += "/ranges"
	}
	return s
}

// noopModes are the adds=/p= rows: one producer or four adding while the
// jobs run, and every add made before the timer (the scheduler alone).
var noopModes = []noopMode{
	{producers: 1},
	{producers: 4},
	{before: true, producers: 1},
}

// noopWorkers returns the workers= values: 2 × GOMAXPROCS and 64.
func noopWorkers() []int {
	ws := []int{2 * runtime.GOMAXPROCS(0), 64}
	slices.Sort(ws)
	return slices.Compact(ws)
}

// noopWarmup is the number of jobs each run makes before the timer, so that
// every implementation has its goroutines started and its free lists and
// tables grown: the timed window is the steady state. It is many times what
// the scheduler holds at once with 64 workers (up to 64 batches of 64
// claimed and 1,024 added ahead); 4,096, the number before, was less than
// that, so that the timed window of workers=64 included the growth.
func noopWarmup() int { return sized(1<<16, 64) }

// BenchmarkSched_NoOp measures no-op jobs per second through jobkit's
// scheduler, sched, against raw goroutines and worker pools, named
//
//	Sched_NoOp/workers=<W>/adds=<during|before>/p=<P>/impl=<impl>
//
// Every implementation runs b.N jobs whose payloads are distinct ints (the
// scheduler's distinct keys), each job a call that counts it; ns/op is ns
// per job, from the first add to the last job's return (and the producers'),
// jobs/s its inverse, and allocs/job every heap allocation in the timed
// window, from any goroutine, per job.
//
// The implementations (see noopRunners), each with W workers where it has
// a number of them:
//   - sched-b<B>: sched.New(Config{Workers: W}) (two scheduling loops, the
//     default governor: slots only, one per worker) with one queue of
//     BatchSize B and the default retention of succeeded entries;
//     sched-b<B>-r0 keeps none (Retention{}). Every job goes through Add
//     (the key's deduplication), the governor's permit, a take into a scope,
//     a worker, Start and Settle.
//   - goroutines: one goroutine per job, joined by a sync.WaitGroup.
//   - conc: sourcegraph/conc pool.New().WithMaxGoroutines(W), Go.
//   - pond: alitto/pond/v2 NewPool(W) (unbounded queue), Go.
//   - ants: panjf2000/ants/v2 NewPool(W), Submit (blocks while full).
//   - ants-func: ants NewPoolWithFuncGeneric[int](W, job), Invoke(id): no
//     closure per job.
//
// Producers: with adds=during, P goroutines add b.N/P jobs each, released
// together when the timer starts, at most about 1,024 adds ahead of the
// jobs run (one credit per 64 adds, handed back as jobs run, as in
// BenchmarkMPMC) so that the scheduler's queue and pond's stay small. With
// adds=before (the scheduler only: submitting to a pool runs the job), the
// b.N jobs are added to a paused queue before the timer, and the timer
// starts as the queue is resumed.
//
// Before the timer, each run makes noopWarmup jobs (65,536) with P
// producers adding while they run, so that the timed window is the steady
// state. W is 2 × GOMAXPROCS and 64.
func BenchmarkSched_NoOp(b *testing.B) {
	for _, w := range noopWorkers() {
		b.Run(name("workers=%d", w), func(b *testing.B) {
			for _, m := range noopModes {
				b.Run(m.String(), func(b *testing.B) {
					for _, f := range noopRunners() {
						if m.before && !f.holds {
							continue
						}
						b.Run("impl="+f.name, func(b *testing.B) { runNoOp(b, f, w, m) })
					}
				})
			}
		})
	}
}

func runNoOp(b *testing.B, f runnerFactory, workers int, m noopMode) {
	b.ReportAllocs()
	h, err := newNoopHarness(f, workers)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := h.r.close(); err != nil {
			b.Error(err)
		}
	}()
	h.round(b, noopWarmup(), noopMode{producers: m.producers, ranges: m.ranges}, nil, nil, nil)
	var m0, m1 uint64
	h.round(b, b.N, m, nil, func() {
		runtime.GC() // the setup's garbage
		m0 = mallocs()
		b.ResetTimer()
	}, func() {
		b.StopTimer()
		m1 = mallocs()
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
	b.ReportMetric(float64(m1-m0)/float64(b.N), "allocs/job")
}

// noopHarness drives one jobRunner through rounds of jobs.
type noopHarness struct {
	r    jobRunner
	cur  atomic.Pointer[noopRound]
	next int // the payload of the next round's first job
}

func newNoopHarness(f runnerFactory, workers int) (*noopHarness, error) {
	h := &noopHarness{}
	r, err := f.new(workers, func(id int) { h.cur.Load().job(id) })
	if err != nil {
		return nil, err
	}
	h.r = r
	return h, nil
}

// noopRound is the state of one round of n jobs, with payloads base,
// base+1, …: the jobs count themselves and the one that brings the count
// to n closes done.
type noopRound struct {
	n, base   int
	processed atomic.Int64
	done      chan struct{}
	credits   chan struct{} // nil: producers are not bounded
	seen      []atomic.Int32
}

// job is every implementation's job: it counts the job, hands a producer
// credit back for every creditChunk jobs, and records the payload if seen
// is kept.
func (rd *noopRound) job(id int) {
	if rd.seen != nil {
		if i := id - rd.base; i >= 0 && i < len(rd.seen) {
			rd.seen[i].Add(1)
		}
	}
	rd.count()
}

func (rd *noopRound) count() {
	p := rd.processed.Add(1)
	if rd.credits != nil && p%creditChunk == 0 {
		<-rd.credits // never blocks: the producers took it first
	}
	if p == int64(rd.n) {
		close(rd.done)
	}
}

// round runs n jobs in mode m and returns when they have all run and every
// producer has returned. started is called just before the first add of
// adds=during or the release of adds=before, stopped once it is over; seen,
// if not nil, has room for n counts, by payload − base. A job the runner
// refuses is an error of tb.
func (h *noopHarness) round(tb testing.TB, n int, m noopMode, seen []atomic.Int32, started, stopped func()) *noopRound {
	tb.Helper()
	rd := &noopRound{n: n, base: h.next, done: make(chan struct{}), seen: seen}
	h.next += n
	if !m.before {
		rd.credits = make(chan struct{}, smallBacklog/creditChunk)
	}
	h.cur.Store(rd)
	var refused atomic.Int64
	var firstErr error
	var errOnce sync.Once
	add := func(id int) {
		if err := h.r.submit(id); err != nil {
			refused.Add(1)
			errOnce.Do(func() { firstErr = err })
			rd.count() // the job will not run: count it so that the round ends
		}
	}
	addAll := func(cs chunkSubmitter, ids []int) {
		n, err := cs.submitAll(ids)
		if err != nil {
			errOnce.Do(func() { firstErr = err })
		}
		refused.Add(int64(n))
		for range n {
			rd.count() // the job will not run: count it so that the round ends
		}
	}
	start := make(chan struct{})
	var prods sync.WaitGroup
	if m.before {
		h.r.hold()
		for i := range n {
			add(rd.base + i)
		}
	} else {
		for p := range m.producers {
			from, to, step := p, n, m.producers
			if m.ranges {
				from, to, step = p*n/m.producers, (p+1)*n/m.producers, 1
			}
			prods.Go(func() {
				<-start
				if cs, ok := h.r.(chunkSubmitter); ok {
					// A credit a chunk, as below, and the chunk in one call.
					ids := make([]int, 0, creditChunk)
					for i := from; i < to; i += step {
						ids = append(ids, rd.base+i)
						if len(ids) == creditChunk || i+step >= to {
							rd.credits <- struct{}{}
							addAll(cs, ids)
							ids = ids[:0]
						}
					}
					return
				}
				for i, j := from, 0; i < to; i, j = i+step, j+1 {
					if j%creditChunk == 0 {
						rd.credits <- struct{}{}
					}
					add(rd.base + i)
				}
			})
		}
	}
	if started != nil {
		started()
	}
	if m.before {
		h.r.release()
	} else {
		close(start)
	}
	<-rd.done
	prods.Wait()
	if stopped != nil {
		stopped()
	}
	if k := refused.Load(); k > 0 {
		tb.Errorf("%d of %d jobs refused; the first: %v", k, n, firstErr)
	}
	return rd
}

// TestNoOpRunnersRunEveryJobOnce checks every implementation of
// BenchmarkSched_NoOp as the benchmark drives it: each job runs exactly
// once, in every mode, after a warm-up round, with 2 and 64 workers.
func TestNoOpRunnersRunEveryJobOnce(t *testing.T) {
	t.Parallel()
	n := sized(20_000, 3_000)
	for _, f := range noopRunners() {
		for _, w := range []int{2, 64} {
			for _, m := range append(slices.Clip(noopModes), noopMode{producers: 4, ranges: true}) { // and BenchmarkSched_NoOpKeys's keys=ranges
				if m.before && !f.holds {
					continue
				}
				t.Run(name("impl=%s/workers=%d/%s", f.name, w, m), func(t *testing.T) {
					t.Parallel()
					h, err := newNoopHarness(f, w)
					if err != nil {
						t.Fatal(err)
					}
					warm := make([]atomic.Int32, 100)
					h.round(t, len(warm), noopMode{producers: 1}, warm, nil, nil)
					seen := make([]atomic.Int32, n)
					rd := h.round(t, n, m, seen, nil, nil)
					if err := h.r.close(); err != nil {
						t.Fatal(err)
					}
					for _, s := range [][]atomic.Int32{warm, seen} {
						for i := range s {
							if c := s[i].Load(); c != 1 {
								t.Fatalf("job %d of a round ran %d times", i, c)
							}
						}
					}
					if got := rd.processed.Load(); got != int64(n) {
						t.Errorf("%d jobs counted, want %d", got, n)
					}
				})
			}
		}
	}
}

// BenchmarkSched_NoOpKeys is BenchmarkSched_NoOp's first row (workers =
// 2 × GOMAXPROCS, producers adding while the jobs run) for sched-b64 with
// the keys users have, against pond in the same run and mode, named
//
//	Sched_NoOpKeys/keys=<int|string|ranges>/impl=<sched-b64|pond>
//
// keys=int: the payload is its own key (as in BenchmarkSched_NoOp), one
// producer; keys=string: the queue's Key function makes "ns/name-<payload>",
// one string (and its allocation) per add, the case of keys that name
// objects; keys=ranges: integer keys from four producers that each own a
// range of IDs and add it in order. pond has no keys: its row differs only
// in the number of producers.
func BenchmarkSched_NoOpKeys(b *testing.B) {
	v := schedVariant{batch: 64, keep: true}
	intKeys := func(w int, job func(int)) (jobRunner, error) { return newSchedRunner[int](w, v, nil, job) }
	kinds := []struct {
		name string
		mode noopMode
		new  func(workers int, job func(int)) (jobRunner, error)
	}{
		{"int", noopMode{producers: 1}, intKeys},
		{"string", noopMode{producers: 1}, func(w int, job func(int)) (jobRunner, error) {
			return newSchedRunner(w, v, func(id int) string { return "ns/name-" + strconv.Itoa(id) }, job)
		}},
		{"ranges", noopMode{producers: 4, ranges: true}, intKeys},
	}
	w := 2 * runtime.GOMAXPROCS(0)
	for _, k := range kinds {
		b.Run("keys="+k.name, func(b *testing.B) {
			b.Run("impl="+v.name(), func(b *testing.B) {
				runNoOp(b, runnerFactory{name: v.name(), holds: true, new: k.new}, w, k.mode)
			})
			b.Run("impl=pond", func(b *testing.B) { runPondIn(b, k.mode) })
		})
	}
}

// runPond runs BenchmarkSched_NoOp's first row (workers = 2 × GOMAXPROCS,
// one producer adding while the jobs run) for pond, the fastest pool.
func runPond(b *testing.B) { runPondIn(b, noopMode{producers: 1}) }

// runPondIn runs pond with workers = 2 × GOMAXPROCS in mode m.
func runPondIn(b *testing.B, m noopMode) {
	fs := noopRunners()
	i := slices.IndexFunc(fs, func(f runnerFactory) bool { return f.name == "pond" })
	runNoOp(b, fs[i], 2*runtime.GOMAXPROCS(0), m)
}

// BenchmarkSched_AddAll is BenchmarkSched_NoOpKeys's int and string rows
// with a third column, sched-b64-all: the same scheduler, whose producer
// adds its jobs creditChunk (64) at a time with Queue.AddAll instead of one
// at a time with Add, named
//
//	Sched_AddAll/keys=<int|string>/impl=<sched-b64|sched-b64-all|pond>
//
// The pools have no call that submits several jobs: pond's row submits
// them one at a time, as in BenchmarkSched_NoOpKeys.
func BenchmarkSched_AddAll(b *testing.B) {
	v := schedVariant{batch: 64, keep: true}
	kinds := []struct {
		name string
		key  func(int) string // nil: int keys
	}{
		{"int", nil},
		{"string", func(id int) string { return "ns/name-" + strconv.Itoa(id) }},
	}
	w := 2 * runtime.GOMAXPROCS(0)
	mode := noopMode{producers: 1}
	for _, k := range kinds {
		newRunner := func(all bool) func(int, func(int)) (jobRunner, error) {
			return func(w int, job func(int)) (jobRunner, error) {
				if k.key == nil {
					r, err := newSchedRunner[int](w, v, nil, job)
					if err != nil || !all {
						return r, err
					}
					return schedAllRunner[int]{r}, nil
				}
				r, err := newSchedRunner(w, v, k.key, job)
				if err != nil || !all {
					return r, err
				}
				return schedAllRunner[string]{r}, nil
			}
		}
		b.Run("keys="+k.name, func(b *testing.B) {
			b.Run("impl="+v.name(), func(b *testing.B) {
				runNoOp(b, runnerFactory{name: v.name(), holds: true, new: newRunner(false)}, w, mode)
			})
			b.Run("impl="+v.name()+"-all", func(b *testing.B) {
				runNoOp(b, runnerFactory{name: v.name() + "-all", holds: true, new: newRunner(true)}, w, mode)
			})
			b.Run("impl=pond", func(b *testing.B) { runPondIn(b, mode) })
		})
	}
}
