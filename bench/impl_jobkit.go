package bench

import (
	"context"
	"errors"

	"github.com/jobkit/jobkit/distinct"
	"github.com/jobkit/jobkit/scope"
)

// jobkit adapts distinct.Queue. Its consumers are the queue's own calls:
// Process, the allocation-free form for one batch; Work, the consumer loop
// (PathWork); and Take inside scope.Run, the README's explicit-scope loop
// (PathScope).
type jobkit[K comparable] struct {
	q *distinct.Queue[K]
}

func newJobkit[K comparable](o Options) *jobkit[K] {
	q, err := distinct.New[K](distinct.Config{Rerun: o.Rerun})
	if err != nil {
		panic(err)
	}
	return &jobkit[K]{q: q}
}

func (j *jobkit[K]) Add(x K) { j.q.Add(x) }

func (j *jobkit[K]) Consumer() Consumer[K] { return j }

func (j *jobkit[K]) Process(max int, f ProcessFunc[K]) error {
	return stopped(j.q.Process(context.Background(), max, f))
}

// Run is Queue.Work for PathWork. For PathScope it is the README's second
// example without early settling: scope.Run around a take, the batch removed
// when the scope closes with success (f's nil) and put back when it fails.
// The take is TakeAppend into the consumer's buffer (Take itself allocates
// the slice it returns: one allocation per batch more; distinct's
// BenchmarkQueue_Paths shows both). The function given to scope.Run is made
// once per Run, not per batch, so that every allocation per batch is
// jobkit's own.
func (j *jobkit[K]) Run(path Path, max int, f ProcessFunc[K]) error {
	ctx := context.Background()
	if path != PathScope {
		return stopped(j.q.Work(ctx, max, f))
	}
	var buf []K
	body := func(ctx context.Context, s *scope.Scope) error {
		items, err := j.q.TakeAppend(ctx, s, max, buf[:0])
		if err != nil {
			return err
		}
		buf = items
		return f(ctx, items)
	}
	for {
		if err := scope.Run(ctx, body); err != nil {
			return stopped(err)
		}
	}
}

// stopped maps distinct.ErrClosed to ErrStopped.
func stopped(err error) error {
	if errors.Is(err, distinct.ErrClosed) {
		return ErrStopped
	}
	return err
}

func (j *jobkit[K]) Hold(n int) func() {
	scopes := make([]*scope.Scope, 0, n)
	for range n {
		s := scope.New()
		if _, err := j.q.Take(context.Background(), s, 1); err != nil {
			panic(err)
		}
		scopes = append(scopes, s)
	}
	return func() {
		for _, s := range scopes {
			_ = s.Close(scope.Succeeded())
		}
	}
}

func (j *jobkit[K]) Len() int { return j.q.Len() }

func (j *jobkit[K]) Stop() { j.q.Close() }

// Stats exposes the queue's counters to the benchmarks.
func (j *jobkit[K]) Stats() distinct.Stats { return j.q.Stats() }
