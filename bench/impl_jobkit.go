package bench

import (
	"context"
	"errors"

	"github.com/jobkit/jobkit/distinct"
	"github.com/jobkit/jobkit/scope"
)

// jobkit adapts distinct.Queue. Its consumer is the queue's own Process, the
// allocation-free form for one batch, and Work, the consumer loop.
type jobkit struct {
	q *distinct.Queue[int]
}

func newJobkit(o Options) *jobkit {
	q, err := distinct.New[int](distinct.Config{Rerun: o.Rerun})
	if err != nil {
		panic(err)
	}
	return &jobkit{q: q}
}

func (j *jobkit) Add(x int) { j.q.Add(x) }

func (j *jobkit) Consumer() Consumer { return j }

func (j *jobkit) Process(max int, f ProcessFunc) error {
	err := j.q.Process(context.Background(), max, f)
	if errors.Is(err, distinct.ErrClosed) {
		return ErrStopped
	}
	return err
}

func (j *jobkit) Run(max int, f ProcessFunc) error {
	err := j.q.Work(context.Background(), max, f)
	if errors.Is(err, distinct.ErrClosed) {
		return ErrStopped
	}
	return err
}

func (j *jobkit) Hold(n int) func() {
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

func (j *jobkit) Len() int { return j.q.Len() }

func (j *jobkit) Stop() { j.q.Close() }

// Stats exposes the queue's counters to the benchmarks.
func (j *jobkit) Stats() distinct.Stats { return j.q.Stats() }
