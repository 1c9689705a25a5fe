package sched_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// poker calls back into a scheduler from inside its callbacks: an add, and
// every read and control call of its queue and inspector. One poke runs at
// a time, so that a callback the poke itself makes does not recurse.
type poker struct {
	busy  atomic.Bool
	q     *sched.Queue[int, int]
	s     *sched.Scheduler
	next  atomic.Int64
	mu    sync.Mutex
	pokes map[string]int // by callback
	total int
}

// maxPokes bounds the pokes, each of which adds a job whose run pokes
// again.
const maxPokes = 300

func (p *poker) poke(from string) {
	if p.q == nil || !p.busy.CompareAndSwap(false, true) {
		return
	}
	defer p.busy.Store(false)
	p.mu.Lock()
	p.pokes[from]++
	n := p.total
	p.total++
	p.mu.Unlock()
	if n >= maxPokes {
		return
	}
	ctx := context.Background()
	q, i := p.q, p.s.Inspector()
	id, _, _ := q.Add(ctx, int(1_000_000+p.next.Add(1)))
	_, _ = q.Counts(ctx)
	_, _ = q.Get(ctx, id)
	_ = q.Disable(ctx, id)
	_ = q.Enable(ctx, id)
	q.Pause()
	q.Resume()
	_ = q.SetMaxConcurrency(3)
	_ = q.SetRate(0, 0)
	_, _ = i.Summary(ctx, "q")
	_, _ = i.Summaries(ctx)
	query := sched.Query{Queues: []string{"q"}, Match: func(x *sched.Summary) bool {
		p.mu.Lock()
		p.pokes["Match"]++ // within a poke: calls back itself
		p.mu.Unlock()
		_, _ = q.Get(ctx, x.ID)
		_, _ = i.Summary(ctx, "q")
		return true
	}}
	_, _ = i.Count(ctx, query)
	for range i.List(ctx, query) {
		break
	}
	_ = i.RetryID(ctx, "q", id, false)
	_, _ = i.Reap(ctx, time.Now(), 0)
	_, _ = i.Get(ctx, "q", id)
}

type pokeMetric struct {
	p    *poker
	name string
}

func (m pokeMetric) Inc()            { m.p.poke(m.name) }
func (m pokeMetric) Dec()            { m.p.poke(m.name) }
func (m pokeMetric) Set(float64)     { m.p.poke(m.name) }
func (m pokeMetric) Observe(float64) { m.p.poke(m.name) }

type pokeProvider struct{ p *poker }

func (pp pokeProvider) NewDepthMetric(string) sched.GaugeMetric  { return pokeMetric{pp.p, "depth"} }
func (pp pokeProvider) NewAddsMetric(string) sched.CounterMetric { return pokeMetric{pp.p, "adds"} }
func (pp pokeProvider) NewLatencyMetric(string) sched.HistogramMetric {
	return pokeMetric{pp.p, "latency"}
}
func (pp pokeProvider) NewWorkDurationMetric(string) sched.HistogramMetric {
	return pokeMetric{pp.p, "duration"}
}
func (pp pokeProvider) NewUnfinishedWorkSecondsMetric(string) sched.SettableGaugeMetric {
	return pokeMetric{pp.p, "unfinished"}
}
func (pp pokeProvider) NewLongestRunningProcessorSecondsMetric(string) sched.SettableGaugeMetric {
	return pokeMetric{pp.p, "longest"}
}
func (pp pokeProvider) NewRetriesMetric(string) sched.CounterMetric {
	return pokeMetric{pp.p, "retries"}
}

// pokeClock is a Clock whose Now pokes.
type pokeClock struct {
	p *poker
	sched.Clock
}

func (c pokeClock) Now() time.Time { c.p.poke("Clock"); return c.Clock.Now() }

// Every callback of a queue (its Key function, handler, retry Delay,
// metrics, a query's Match, the Clock) may call back into the scheduler:
// add, read, pause and resume, change caps and rates, disable and enable,
// inspect, retry and reap. Nothing deadlocks, every job ends, and Stop
// returns.
func TestCallbacksMayCallBackIntoTheScheduler(t *testing.T) {
	t.Parallel()
	for _, withClock := range []bool{false, true} {
		name := "callbacks"
		if withClock {
			name = "clock"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := &poker{pokes: make(map[string]int)}
				cfg := sched.Config{Workers: 2, Logger: quiet, Metrics: pokeProvider{p}}
				if withClock {
					cfg = sched.Config{Workers: 2, Logger: quiet, Clock: pokeClock{p, must.New(t, sched.Config{}).Clock()}}
				}
				s := must.New(t, cfg) // started once p knows it and its queue
				q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
					Key:   func(v int) int { p.poke("Key"); return v },
					Retry: &sched.RetryPolicy{MaxRetries: 2, Delay: func(int, error) time.Duration { p.poke("Delay"); return time.Millisecond }},
					Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
						p.poke("Handler")
						if j.Payload%3 == 0 {
							return errors.New("fails")
						}
						return nil
					}})
				p.q, p.s = q, s
				if err := s.Start(context.Background()); err != nil {
					t.Fatal(err)
				}
				defer func() {
					if err := s.Stop(context.Background()); err != nil {
						t.Error(err)
					}
				}()
				for i := range 500 {
					must.Add(t, q, i)
				}
				time.Sleep(time.Minute)
				synctest.Wait()
				// The adds above may all have met another callback's poke
				// (the clock's, from a worker) and skipped theirs. Now
				// that every goroutine is blocked no poke runs, so this
				// add's Key pokes for sure, and its own add must end too.
				must.Add(t, q, 500)
				time.Sleep(time.Minute)
				synctest.Wait()
				if c := must.Counts(t, q); c.Live() != 0 || c.Added < 501 {
					t.Errorf("counts %+v, want every job ended", c)
				}
				want := []string{"Key", "Handler", "Delay", "Match"}
				if withClock {
					want = append(want, "Clock")
				} else {
					want = append(want, "adds", "latency", "duration", "retries")
				}
				p.mu.Lock()
				defer p.mu.Unlock()
				for _, from := range want {
					if p.pokes[from] == 0 {
						t.Errorf("no call back from %s (%v)", from, p.pokes)
					}
				}
			})
		})
	}
}
