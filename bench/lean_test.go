package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobkit/jobkit/distinct"
	"github.com/jobkit/jobkit/scope"
)

// leanRunner is BenchmarkSched_Floor's part=lean: the leanest pipeline of
// the shape the scheduler's per-job target asks for, on the design's
// embedded default, a distinct.Queue keyed by the job's key. An add reads
// the clock once (the job's enqueue time) and adds the key, which distinct
// refuses while it is queued or running; each of the workers takes up to
// floorBatch keys into a scope, runs them one after another with one clock
// reading a run (the end of one run is the start of the next), and closes
// the scope successfully, which removes them (the settle).
//
// It leaves out what sched adds around that: scheduling loops apart from
// the workers (admission, the fair pick, caps and rate limits), entry IDs,
// priorities, states and their counts, delays, retention, outcomes and the
// Job a handler sees. It is the reference for how far those layers have to
// come down, not a scheduler.
type leanRunner struct {
	q      *distinct.Queue[int]
	job    func(int)
	base   time.Time
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// runNanos sums the runs' times, so that the clock readings are used.
	runNanos atomic.Int64
}

func newLeanRunner(workers int, job func(int)) (jobRunner, error) {
	q, err := distinct.New[int](distinct.Config{})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &leanRunner{q: q, job: job, base: time.Now(), cancel: cancel}
	for range workers {
		r.wg.Go(func() { r.work(ctx) })
	}
	return r, nil
}

func (r *leanRunner) work(ctx context.Context) {
	buf := make([]int, 0, floorBatch)
	for {
		s := scope.New()
		keys, err := r.q.TakeAppend(ctx, s, floorBatch, buf[:0])
		if err != nil { // ctx ended: nothing was taken
			_ = s.Close(scope.Succeeded())
			return
		}
		r.runNanos.Add(int64(runTimed(r.job, keys, r.base)))
		_ = s.Close(scope.Succeeded()) // no finalizer of ours can fail
	}
}

func (r *leanRunner) submit(id int) error {
	if time.Since(r.base) < 0 { // the monotonic clock never goes back
		return errors.New("lean: the clock went back")
	}
	if !r.q.Add(id) {
		return fmt.Errorf("lean: job %d rejected as a duplicate", id)
	}
	return nil
}

// hold and release are never called: the runner does not hold jobs
// (runnerFactory.holds is false).
func (r *leanRunner) hold()    {}
func (r *leanRunner) release() {}

func (r *leanRunner) close() error {
	// The harness closes a runner once every job it submitted ran, so the
	// workers are waiting in TakeAppend: cancelling its context ends them.
	r.cancel()
	r.wg.Wait()
	if r.runNanos.Load() < 0 {
		return errors.New("lean: the runs took a negative time")
	}
	return nil
}

// runTimed runs job for each of keys, one after another, with one clock
// reading a run (the end of one run is the start of the next), and returns
// the time they took.
func runTimed(job func(int), keys []int, base time.Time) time.Duration {
	start := time.Since(base)
	t := start
	for _, k := range keys {
		job(k)
		t = time.Since(base)
	}
	return t - start
}

// leanMapRunner is BenchmarkSched_Floor's part=lean-map: leanRunner's
// pipeline with a Go map of the live keys and a slice FIFO under one mutex
// in place of the distinct.Queue and its scope: an add inserts the key and
// appends it, a worker takes up to floorBatch under the mutex and, once
// they ran, deletes their keys under it again. It is what the target's
// shape costs without distinct. The map is made with room for four times
// the backlog the benchmark keeps: unsized, it was about a fifth slower
// here (bench/results/profiles.txt).
type leanMapRunner struct {
	mu   sync.Mutex
	cond sync.Cond // signalled when a sleeping worker has work or the runner closes
	live map[int]struct{}
	fifo []int
	// fifo[head:] are queued. It starts over when it empties, which the
	// benchmark's bounded producers make happen all the time; a queue that
	// never emptied would keep its taken prefix.
	head     int
	sleepers int
	closed   bool
	job      func(int)
	base     time.Time
	wg       sync.WaitGroup
	runNanos atomic.Int64
}

func newLeanMapRunner(workers int, job func(int)) (jobRunner, error) {
	r := &leanMapRunner{live: make(map[int]struct{}, 4*floorBacklog), job: job, base: time.Now()}
	r.cond.L = &r.mu
	for range workers {
		r.wg.Go(r.work)
	}
	return r, nil
}

func (r *leanMapRunner) submit(id int) error {
	if time.Since(r.base) < 0 {
		return errors.New("lean-map: the clock went back")
	}
	r.mu.Lock()
	if _, ok := r.live[id]; ok {
		r.mu.Unlock()
		return fmt.Errorf("lean-map: job %d rejected as a duplicate", id)
	}
	r.live[id] = struct{}{}
	if r.head == len(r.fifo) {
		r.fifo, r.head = r.fifo[:0], 0
	}
	r.fifo = append(r.fifo, id)
	wake := r.sleepers > 0
	r.mu.Unlock()
	if wake {
		r.cond.Signal()
	}
	return nil
}

func (r *leanMapRunner) work() {
	batch := make([]int, 0, floorBatch)
	for {
		r.mu.Lock()
		for r.head == len(r.fifo) {
			if r.closed {
				r.mu.Unlock()
				return
			}
			r.sleepers++
			r.cond.Wait()
			r.sleepers--
		}
		n := min(floorBatch, len(r.fifo)-r.head)
		batch = append(batch[:0], r.fifo[r.head:r.head+n]...)
		r.head += n
		more := r.head < len(r.fifo) && r.sleepers > 0
		r.mu.Unlock()
		if more {
			r.cond.Signal()
		}
		r.runNanos.Add(int64(runTimed(r.job, batch, r.base)))
		r.mu.Lock()
		for _, k := range batch {
			delete(r.live, k)
		}
		r.mu.Unlock()
	}
}

func (r *leanMapRunner) hold()    {}
func (r *leanMapRunner) release() {}

func (r *leanMapRunner) close() error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.cond.Broadcast()
	r.wg.Wait()
	if r.runNanos.Load() < 0 {
		return errors.New("lean-map: the runs took a negative time")
	}
	return nil
}

// leanFactory is leanRunner as a runnerFactory, leanMapFactory
// leanMapRunner.
func leanFactory() runnerFactory {
	return runnerFactory{name: "lean", new: newLeanRunner}
}

func leanMapFactory() runnerFactory {
	return runnerFactory{name: "lean-map", new: newLeanMapRunner}
}

// TestLeanRunnersRunEveryJobOnce checks part=lean and part=lean-map as
// BenchmarkSched_Floor drives them: each job runs exactly once, and a key
// that is live is refused.
func TestLeanRunnersRunEveryJobOnce(t *testing.T) {
	t.Parallel()
	for _, f := range []runnerFactory{leanFactory(), leanMapFactory()} {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			checkEveryJobOnce(t, f)

			// A job that blocks holds its key live: adding it again is
			// refused.
			running, release := make(chan int, 1), make(chan struct{})
			r, err := f.new(1, func(id int) { running <- id; <-release })
			if err != nil {
				t.Fatal(err)
			}
			if err := r.submit(7); err != nil {
				t.Fatal(err)
			}
			if id := <-running; id != 7 {
				t.Fatalf("ran %d, want 7", id)
			}
			if err := r.submit(7); err == nil {
				t.Error("a running key was added again")
			}
			close(release)
			if err := r.close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// checkEveryJobOnce runs one round of jobs through f's runner with 4
// workers and one producer, as BenchmarkSched_Floor drives it, closes it,
// and checks that each job ran exactly once.
func checkEveryJobOnce(t *testing.T, f runnerFactory) {
	t.Helper()
	h, err := newNoopHarness(f, 4)
	if err != nil {
		t.Fatal(err)
	}
	seen := make([]atomic.Int32, sized(20_000, 3_000))
	h.round(t, len(seen), noopMode{producers: 1}, seen, nil, nil)
	if err := h.r.close(); err != nil {
		t.Fatal(err)
	}
	for i := range seen {
		if c := seen[i].Load(); c != 1 {
			t.Fatalf("job %d ran %d times", i, c)
		}
	}
}
