package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/alitto/pond/v2"
	"github.com/panjf2000/ants/v2"
	"github.com/sourcegraph/conc/pool"

	"github.com/jobkit/jobkit/sched"
)

// jobRunner runs no-op jobs for BenchmarkSched_NoOp: jobkit's scheduler, a
// worker pool, or raw goroutines. Each runs job(id) once for every id
// submitted, on a goroutine of its own choosing.
type jobRunner interface {
	// submit hands the job with payload id to the runner, from any
	// goroutine; it may block while the runner is full. It returns an error
	// if the runner refused the job (it will not run).
	submit(id int) error
	// hold makes the jobs submitted from now on wait until release: only
	// for runners with runnerFactory.holds.
	hold()
	release()
	// close waits until every goroutine of the runner has exited. The jobs
	// submitted have all run by then.
	close() error
}

// runnerFactory makes one implementation of BenchmarkSched_NoOp.
type runnerFactory struct {
	name string
	// holds: the runner can take jobs without running them until release,
	// so that adds=before (every add made before the timer) applies. Only
	// the scheduler can: submitting to a pool runs the job.
	holds bool
	new   func(workers int, job func(id int)) (jobRunner, error)
}

// schedVariant is a scheduler configuration of BenchmarkSched_NoOp.
type schedVariant struct {
	batch int
	// keep: the default retention of succeeded entries (a minute, at most
	// 1,000); otherwise none (Retention{}: deleted as they succeed).
	keep bool
	// null: the queue's backend is a nullBackend, which does nearly
	// nothing (int keys only): BenchmarkSched_Floor/part=scheduler.
	null bool
}

func (v schedVariant) name() string {
	n := fmt.Sprintf("sched-b%d", v.batch)
	if !v.keep {
		n += "-r0"
	}
	return n
}

// schedVariants are the scheduler's columns: batch sizes 1, 16 (the
// default) and 64 with the default retention, and 16 and 64 with none.
var schedVariants = []schedVariant{
	{batch: 1, keep: true},
	{batch: 16, keep: true},
	{batch: 64, keep: true},
	{batch: 16},
	{batch: 64},
}

// noopRunners returns the implementations of BenchmarkSched_NoOp: the
// scheduler's variants, then raw goroutines, conc, pond, ants (Submit of a
// closure) and ants-func (ants' generic pool of one function, which takes
// the payload without a closure).
func noopRunners() []runnerFactory {
	var fs []runnerFactory
	for _, v := range schedVariants {
		fs = append(fs, runnerFactory{name: v.name(), holds: true, new: func(workers int, job func(int)) (jobRunner, error) {
			return newSchedRunner[int](workers, v, nil, job)
		}})
	}
	return append(fs,
		runnerFactory{name: "goroutines", new: func(_ int, job func(int)) (jobRunner, error) {
			return &goRunner{job: job}, nil
		}},
		runnerFactory{name: "conc", new: func(workers int, job func(int)) (jobRunner, error) {
			return &concRunner{p: pool.New().WithMaxGoroutines(workers), job: job}, nil
		}},
		runnerFactory{name: "pond", new: func(workers int, job func(int)) (jobRunner, error) {
			return &pondRunner{p: pond.NewPool(workers), job: job}, nil
		}},
		runnerFactory{name: "ants", new: func(workers int, job func(int)) (jobRunner, error) {
			p, err := ants.NewPool(workers)
			return &antsRunner{p: p, job: job}, err
		}},
		runnerFactory{name: "ants-func", new: func(workers int, job func(int)) (jobRunner, error) {
			p, err := ants.NewPoolWithFuncGeneric(workers, job)
			return &antsFuncRunner{p: p}, err
		}},
	)
}

// schedRunner is jobkit's scheduler with one queue of int payloads that are
// their own distinct keys, with the default governor (slots only, one per
// worker) and the default number of scheduling loops.
type schedRunner[K comparable] struct {
	s *sched.Scheduler
	q *sched.Queue[int, K]
}

// newSchedRunner returns the scheduler with one queue of variant v whose
// jobs' keys are key(payload), or the payloads themselves if key is nil.
func newSchedRunner[K comparable](workers int, v schedVariant, key func(int) K, job func(int)) (*schedRunner[K], error) {
	s, err := sched.New(sched.Config{Workers: workers})
	if err != nil {
		return nil, err
	}
	qc := sched.QueueConfig[int, K]{
		Key: key,
		Handler: func(_ context.Context, j *sched.Job[int, K]) error {
			job(j.Payload)
			return nil
		},
		BatchSize: v.batch,
	}
	if !v.keep {
		qc.Retention = &sched.Retention{}
	}
	if v.null {
		b, ok := any(newNullBackend()).(sched.Backend[int, K])
		if !ok {
			return nil, errors.New("the null backend has int keys")
		}
		qc.Backend = b
	}
	q, err := sched.NewQueue(s, "noop", qc)
	if err != nil {
		return nil, err
	}
	if err := s.Start(context.Background()); err != nil {
		return nil, err
	}
	return &schedRunner[K]{s: s, q: q}, nil
}

func (r *schedRunner[K]) submit(id int) error {
	_, added, err := r.q.Add(context.Background(), id)
	if err == nil && !added {
		err = fmt.Errorf("sched: job %d rejected as a duplicate", id)
	}
	return err
}

// chunkSubmitter is a jobRunner that takes several jobs in one call: the
// scheduler's AddAll. submitAll returns how many of ids will not run, and
// an error if any will not.
type chunkSubmitter interface {
	submitAll(ids []int) (refused int, err error)
}

// schedAllRunner is a schedRunner whose producers add their jobs a chunk at
// a time with AddAll.
type schedAllRunner[K comparable] struct{ *schedRunner[K] }

func (r schedAllRunner[K]) submitAll(ids []int) (int, error) {
	out, err := r.q.AddAll(context.Background(), ids)
	refused := len(ids) - len(out)
	for i, res := range out {
		if !res.Added {
			refused++
			if err == nil {
				err = fmt.Errorf("sched: job %d rejected as a duplicate", ids[i])
			}
		}
	}
	return refused, err
}

func (r *schedRunner[K]) hold()    { r.q.Pause() }
func (r *schedRunner[K]) release() { r.q.Resume() }

func (r *schedRunner[K]) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return r.s.Stop(ctx)
}

// goRunner starts one goroutine per job, joined by a WaitGroup.
type goRunner struct {
	wg  sync.WaitGroup
	job func(int)
}

func (r *goRunner) submit(id int) error {
	r.wg.Go(func() { r.job(id) })
	return nil
}

func (r *goRunner) close() error {
	r.wg.Wait()
	return nil
}

// concRunner is conc's pool.Pool with at most workers goroutines: Go
// blocks while they are all busy.
type concRunner struct {
	p   *pool.Pool
	job func(int)
}

func (r *concRunner) submit(id int) error {
	r.p.Go(func() { r.job(id) })
	return nil
}

func (r *concRunner) close() error {
	r.p.Wait()
	return nil
}

// pondRunner is pond's pool with at most workers goroutines and its default
// queue (unbounded, non-blocking); Go submits without a future.
type pondRunner struct {
	p   pond.Pool
	job func(int)
}

func (r *pondRunner) submit(id int) error { return r.p.Go(func() { r.job(id) }) }

func (r *pondRunner) close() error {
	r.p.StopAndWait()
	return nil
}

// antsRunner is ants' Pool of workers goroutines with its default options:
// Submit blocks while they are all busy.
type antsRunner struct {
	p   *ants.Pool
	job func(int)
}

func (r *antsRunner) submit(id int) error { return r.p.Submit(func() { r.job(id) }) }

func (r *antsRunner) close() error { return r.p.ReleaseTimeout(time.Minute) }

// antsFuncRunner is ants' PoolWithFuncGeneric[int]: workers goroutines
// that all run one function, handed the payload itself.
type antsFuncRunner struct {
	p *ants.PoolWithFuncGeneric[int]
}

func (r *antsFuncRunner) submit(id int) error { return r.p.Invoke(id) }

func (r *antsFuncRunner) close() error { return r.p.ReleaseTimeout(time.Minute) }

// The peers cannot hold jobs (runnerFactory.holds is false).
func (*goRunner) hold()          {}
func (*goRunner) release()       {}
func (*concRunner) hold()        {}
func (*concRunner) release()     {}
func (*pondRunner) hold()        {}
func (*pondRunner) release()     {}
func (*antsRunner) hold()        {}
func (*antsRunner) release()     {}
func (*antsFuncRunner) hold()    {}
func (*antsFuncRunner) release() {}
