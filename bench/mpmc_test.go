package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// mpmcCase is one (producers, consumers, batch) of scenario 1.
type mpmcCase struct {
	p, c, batch int
	// extra: run only with keys=ordered and backlog=small, the grid of the
	// earlier reports, kept for comparison with them.
	extra bool
}

// mpmcCases are the rows of every scenario-1 table, in order: (1,1), (4,4)
// and (4,64) one item at a time and (4,4) in batches of 16 for every key
// kind, path and backlog; the rest of the earlier grid only for keys=ordered
// with a small backlog.
var mpmcCases = []mpmcCase{
	{p: 1, c: 1, batch: 1},
	{p: 1, c: 1, batch: 16, extra: true},
	{p: 4, c: 4, batch: 1},
	{p: 4, c: 4, batch: 16},
	{p: 4, c: 64, batch: 1},
	{p: 4, c: 64, batch: 16, extra: true},
	{p: 16, c: 256, batch: 1, extra: true},
	{p: 16, c: 256, batch: 16, extra: true},
}

// smallBacklog bounds the queued items of backlog=small: producers may be at
// most this many adds ahead of the consumers. creditChunk is the grain of
// that bound: a producer takes a credit for every chunk of adds, and
// consumers hand one back for every chunk processed, so that the bound costs
// one channel operation per chunk on each side.
const (
	smallBacklog = 1024
	creditChunk  = 64
)

// backlog is one value of the backlog= dimension.
type backlog struct {
	label   string
	preload int // keys queued before the timer starts; 0 for small
}

// backlogs returns the backlog= values: small, then the large preload of
// JOBKIT_BENCH_BACKLOG items (default 1,000,000; 1,000 in the quick form).
func backlogs() ([]backlog, error) {
	n := sized(1_000_000, 1_000)
	if s := os.Getenv("JOBKIT_BENCH_BACKLOG"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("JOBKIT_BENCH_BACKLOG=%q is not a positive integer", s)
		}
		n = v
	}
	return []backlog{{label: "small"}, {label: countLabel(n), preload: n}}, nil
}

// countLabel writes n as 1M, 250k or 1234.
func countLabel(n int) string {
	switch {
	case n%1_000_000 == 0:
		return strconv.Itoa(n/1_000_000) + "M"
	case n%1_000 == 0:
		return strconv.Itoa(n/1_000) + "k"
	}
	return strconv.Itoa(n)
}

// BenchmarkMPMC is scenario 1, end to end with distinct keys, named
//
//	MPMC/keys=<kind>/path=<path>/backlog=<backlog>/p=<P>/c=<C>/batch=<B>/impl=<impl>
//
// P producers add b.N distinct keys of the kind (keyKinds: ordered,
// ranges, scrambled, string, struct, named); C consumers take batches of up
// to B items along path and complete them; the timer stops when b.N items
// have been processed and every producer has returned, so that asynchronous
// adds cannot flatter a peer. The work per item is nothing: the figure is the
// queue's own cost per item, one add and one take-and-complete. The keys are
// made before the timer starts and are the same for every implementation.
//
// path=work is each implementation's consumer loop (Consumer.Run with
// PathWork: jobkit's Queue.Work, Process in a loop for the peers);
// path=scope is jobkit's explicit-scope loop (scope.Run around Take, settled
// when the scope closes). The peers have one loop, so path=scope runs only
// the implementations with Factory.Scope; the report compares them with
// the peers' path=work figures.
//
// backlog=small bounds the queue: producers wait (on credits, one per 64
// adds) while they are about 1,024 adds ahead of the consumers, so the queue
// stays small for every implementation alike. (Unbounded, the producers of
// one implementation run hundreds of thousands of items ahead and those of
// another a few hundred, and the priority queue's asynchronous adds take
// all b.N in at once.) backlog=1M (or JOBKIT_BENCH_BACKLOG) preloads that
// many further keys of the kind before the timer, in index order, and then
// lets the producers race the consumers unbounded: the queue starts at
// 1,000,000, does not fall below it (see below) and grows past it while the
// producers are ahead. The probe run that testing makes with b.N = 1 before
// the measured one skips the preload unless -benchtime is 1x (its figure is
// not reported).
//
// Peers without a batch take hand out one item per Get whatever the batch;
// the channel's batch is one blocking and up to batch-1 non-blocking
// receives. Reported: ns/op is ns per item; allocs/item and allocs/batch
// count every heap allocation in the timed window, from any goroutine, per
// item and per batch processed; items/batch is the mean batch size;
// peak-backlog is the number of items queued when the last producer
// returned (the peak when the producers are ahead of the consumers).
//
// A consumer whose batch brings the count of processed items to b.N or past
// it holds that batch, and takes no other, until the timer has stopped: the
// timed work is b.N adds and b.N (plus at most C·B) takes, whichever side is
// faster, and a preloaded backlog stays at least as large as the preload.
//
// Goroutines start before the timer and are released together; once the
// timer has stopped the queue is stopped and drained, and every goroutine has
// exited when the benchmark returns.
func BenchmarkMPMC(b *testing.B) {
	for _, kk := range keyKinds {
		b.Run("keys="+kk.name(), kk.mpmc)
	}
}

func (k *keys[K]) mpmc(b *testing.B) {
	defer k.release()
	bls, err := backlogs()
	if err != nil {
		b.Fatal(err)
	}
	for _, path := range Paths {
		b.Run("path="+string(path), func(b *testing.B) {
			for _, bl := range bls {
				b.Run("backlog="+bl.label, func(b *testing.B) {
					for _, cs := range mpmcCases {
						if cs.extra && (k.kind != "ordered" || bl.preload != 0) {
							continue
						}
						b.Run(name("p=%d/c=%d/batch=%d", cs.p, cs.c, cs.batch), func(b *testing.B) {
							for _, f := range Factories[K]() {
								if path == PathScope && !f.Scope {
									continue
								}
								b.Run("impl="+f.Name, func(b *testing.B) {
									k.runMPMC(b, f, path, bl.preload, cs)
								})
							}
						})
					}
				})
			}
		})
	}
}

// padded is a counter on a cache line of its own.
type padded struct {
	n int64
	_ [120]byte
}

func (k *keys[K]) runMPMC(b *testing.B, f Factory[K], path Path, preload int, cs mpmcCase) {
	b.ReportAllocs()
	n := b.N
	if probe(b) {
		preload = 0
	}
	all := k.slice(preload + n)
	initial, timed := all[:preload], all[preload:]
	o := Options{}
	var credits chan struct{}
	if preload > 0 {
		o.Capacity = preload + n // the channel: producers never block
	} else {
		credits = make(chan struct{}, smallBacklog/creditChunk)
	}
	q := f.New(o)
	for _, x := range initial {
		q.Add(x)
	}
	q.Len() // let the priority queue take its buffered adds in

	var (
		start, done = make(chan struct{}), make(chan struct{})
		hold        = make(chan struct{}) // closed when the timer has stopped
		quit        atomic.Bool           // the timer has stopped: drain
		processed   atomic.Int64
		batches     = make([]padded, cs.c) // per consumer, while !quit
		peak        atomic.Int64
		left        atomic.Int64 // producers still adding
		cons, prods sync.WaitGroup
	)
	left.Store(int64(cs.p))
	for c := range cs.c {
		cons.Go(func() {
			con := q.Consumer()
			nb := &batches[c].n
			count := func(_ context.Context, items []K) error {
				if quit.Load() {
					return nil
				}
				*nb++
				m := int64(len(items))
				p := processed.Add(m)
				if credits != nil {
					for range p/creditChunk - (p-m)/creditChunk {
						<-credits // never blocks: the producers took it first
					}
				}
				if p >= int64(n) { // b.N processed: take nothing more until the timer stops
					if p-m < int64(n) {
						close(done)
					}
					<-hold
				}
				return nil
			}
			<-start
			if err := con.Run(path, cs.batch, count); !errors.Is(err, ErrStopped) {
				b.Error(err)
			}
		})
	}
	for p := range cs.p {
		prods.Go(func() {
			from, to, step := k.share(p, cs.p, n)
			<-start
			for i, j := from, 0; i < to; i, j = i+step, j+1 {
				if credits != nil && j%creditChunk == 0 {
					credits <- struct{}{}
				}
				q.Add(timed[i])
			}
			if left.Add(-1) == 0 {
				peak.Store(int64(preload+n) - processed.Load())
			}
		})
	}
	runtime.GC() // the preload's garbage
	m0 := mallocs()
	b.ResetTimer()
	close(start)
	<-done
	prods.Wait()
	b.StopTimer()
	m1 := mallocs()
	quit.Store(true)
	close(hold)
	q.Stop()
	cons.Wait()
	var nb int64
	for i := range batches {
		nb += batches[i].n
	}
	b.ReportMetric(float64(m1-m0)/float64(n), "allocs/item")
	b.ReportMetric(float64(m1-m0)/float64(max(nb, 1)), "allocs/batch")
	b.ReportMetric(float64(processed.Load())/float64(max(nb, 1)), "items/batch")
	b.ReportMetric(float64(peak.Load()), "peak-backlog")
}

// probe reports whether this run is the probe with b.N = 1 that testing
// makes before the measured run: -benchtime is not 1x.
func probe(b *testing.B) bool {
	if b.N != 1 {
		return false
	}
	f := flag.Lookup("test.benchtime")
	return f == nil || f.Value.String() != "1x"
}
