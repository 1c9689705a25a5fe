package governor_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/governor"
)

// fakeSampler returns whatever reading or error the test set last.
type fakeSampler struct {
	mu    sync.Mutex
	r     governor.Reading
	err   error
	calls int
}

func (f *fakeSampler) Sample(ctx context.Context) (governor.Reading, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	return f.r, f.err
}

func (f *fakeSampler) set(r governor.Reading, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.r, f.err = r, err
}

func (f *fakeSampler) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// reading returns a reading with the given CPU percent and memory used, of a
// limit of 1000 bytes.
func reading(cpu float64, memUsed uint64) governor.Reading {
	return governor.Reading{
		CPUPercent: cpu, CPUCores: 2, CPUSource: governor.SourceHost,
		MemoryUsed: memUsed, MemoryAvailable: 1000 - memUsed, MemoryLimit: 1000,
		MemorySource: governor.SourceHost,
	}
}

const interval = time.Second

// setup returns a started Governor with a fake sampler that first reads r.
// It must be called inside a synctest bubble; the Governor is stopped at cleanup.
func setup(t *testing.T, cfg governor.Config, r governor.Reading) (*governor.Governor, *fakeSampler) {
	t.Helper()
	f := &fakeSampler{r: r}
	cfg.Sampler, cfg.Interval = f, interval
	g, err := governor.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return g, f
}

// sample makes the Governor take its next sample, reading r (and err), and
// waits until it has applied it. It must be called inside the bubble.
func sample(f *fakeSampler, r governor.Reading, err error) {
	f.set(r, err)
	time.Sleep(interval)
	synctest.Wait()
}

// tryAcquire reports whether a zero-weight TryAcquire succeeds, releasing the permit.
func tryAcquire(g *governor.Governor) bool {
	p, ok := g.TryAcquire("", governor.Weight{})
	p.Release()
	return ok
}
