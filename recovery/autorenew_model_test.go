package recovery_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/jobkit/jobkit/recovery"
	"github.com/jobkit/jobkit/sched"
)

// countingMetrics counts the reaper's metrics by queue and kind.
type countingMetrics struct {
	mu sync.Mutex
	n  map[string]*atomic.Int64
}

type countingCounter struct{ n *atomic.Int64 }

func (c countingCounter) Inc() { c.n.Add(1) }

func (m *countingMetrics) counter(kind, queue string) sched.CounterMetric {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := kind + "/" + queue
	if m.n[k] == nil {
		m.n[k] = new(atomic.Int64)
	}
	return countingCounter{m.n[k]}
}

func (m *countingMetrics) NewRescuesMetric(q string) sched.CounterMetric {
	return m.counter("rescues", q)
}
func (m *countingMetrics) NewPoisonedMetric(q string) sched.CounterMetric {
	return m.counter("poisoned", q)
}
func (m *countingMetrics) NewAlertsMetric(q string) sched.CounterMetric {
	return m.counter("alerts", q)
}

func (m *countingMetrics) sum(kind string) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var s int64
	for k, v := range m.n {
		if len(k) > len(kind) && k[:len(kind)+1] == kind+"/" {
			s += v.Load()
		}
	}
	return s
}

// rescueLog counts the reaper's records of rescues.
type rescueLog struct {
	mu                     sync.Mutex
	all, running, poisoned int
}

func (*rescueLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *rescueLog) WithAttrs([]slog.Attr) slog.Handler     { return l }
func (l *rescueLog) WithGroup(string) slog.Handler          { return l }
func (l *rescueLog) Handle(_ context.Context, rec slog.Record) error {
	if !strings.HasPrefix(rec.Message, "recovery: rescued") {
		return nil
	}
	var running, poisoned bool
	rec.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "running":
			running = a.Value.Bool()
		case "poisoned":
			poisoned = a.Value.Bool()
		}
		return true
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all++
	if running || poisoned {
		l.running++
	}
	if poisoned {
		l.poisoned++
	}
	return nil
}

// TestRescueModelWithAutoRenew runs random runs (hanging, beating, silent,
// heeding their context or not) in a queue with heartbeats and one with
// AutoRenew, under a reaper with random Interval and Grace, and checks:
// no entry has two live runs at once (a live run's context is not done
// and its heartbeat not stale); a run of the AutoRenew queue whose handler
// has not returned is never rescued; the reaper's Stats, its metrics and
// the entries' own counts agree on rescues and poisonings; every entry
// ends.
func TestRescueModelWithAutoRenew(t *testing.T) {
	if testing.Short() {
		t.Skip("a property test of minutes of fake time per check")
	}
	t.Parallel()
	rapid.Check(t, func(rt *rapid.T) {
		rapid.SyncTest(rt, func(rt *rapid.T) {
			ctx := context.Background()
			iv := time.Duration(rapid.IntRange(20, 500).Draw(rt, "interval ms")) * time.Millisecond
			gr := time.Duration(rapid.IntRange(0, 1000).Draw(rt, "grace ms")) * time.Millisecond
			ls := time.Duration(rapid.IntRange(1, 2000).Draw(rt, "lease ms")) * time.Millisecond
			maxResc := rapid.IntRange(0, 3).Draw(rt, "max rescues")
			batch := rapid.IntRange(1, 4).Draw(rt, "batch")
			workers := rapid.IntRange(1, 4).Draw(rt, "workers")
			jobs := rapid.IntRange(1, 5).Draw(rt, "jobs")
			s, err := sched.New(sched.Config{Workers: workers, Logger: quiet})
			if err != nil {
				rt.Fatal(err)
			}
			m := &countingMetrics{n: map[string]*atomic.Int64{}}
			rl := &rescueLog{}
			r, err := recovery.New(s, recovery.Config{Interval: iv, Grace: gr, Metrics: m, Logger: slog.New(rl)})
			if err != nil {
				rt.Fatal(err)
			}
			gate := make(chan struct{})
			var (
				mu       sync.Mutex
				live     = map[string]*sched.Job[int, int]{}
				liveCtx  = map[string]context.Context{}
				problems []string
			)
			type step struct {
				kind int // 0 finish, 1 fail, 2 hang, 3 hang heeding ctx, 4 beat, 5 silent
				d    time.Duration
			}
			scripts := map[string][][]step{}
			var qs []*sched.Queue[int, int]
			for _, auto := range []bool{false, true} {
				name := "beat"
				if auto {
					name = "auto"
				}
				sc := make([][]step, jobs)
				for k := range sc {
					for range rapid.IntRange(1, 5).Draw(rt, "runs") {
						sc[k] = append(sc[k], step{rapid.IntRange(0, 5).Draw(rt, "kind"), time.Duration(rapid.IntRange(0, 3000).Draw(rt, "d ms")) * time.Millisecond})
					}
				}
				scripts[name] = sc
				var runs [64]atomic.Int64
				q, err := sched.NewQueue(s, name, sched.QueueConfig[int, int]{
					Lease: ls, AutoRenew: auto, MaxRescues: maxResc, BatchSize: batch, Retention: &keep,
					Retry: &sched.RetryPolicy{MaxRetries: 2, Base: 10 * time.Millisecond},
					Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
						key := fmt.Sprintf("%s/%d", name, j.Key)
						mu.Lock()
						if p := live[key]; p != nil {
							if liveCtx[key].Err() == nil {
								problems = append(problems, fmt.Sprintf("%s started while its last run's context is not done", key))
							}
							if err := p.Heartbeat(ctx); !errors.Is(err, sched.ErrStale) {
								problems = append(problems, fmt.Sprintf("%s started while its last run can beat: %v", key, err))
							}
							if auto {
								problems = append(problems, fmt.Sprintf("%s of an AutoRenew queue rescued while its handler runs", key))
							}
						}
						live[key], liveCtx[key] = j, ctx
						mu.Unlock()
						defer func() {
							mu.Lock()
							if live[key] == j {
								delete(live, key)
								delete(liveCtx, key)
							}
							mu.Unlock()
						}()
						i := int(runs[j.Key].Add(1)) - 1
						st := step{}
						if i < len(sc[j.Key]) {
							st = sc[j.Key][i]
						}
						switch st.kind {
						case 1:
							return errors.New("fails")
						case 2:
							if !auto {
								<-gate
							}
						case 3:
							select {
							case <-ctx.Done():
								return ctx.Err()
							case <-gate:
							}
						case 4:
							for end := time.Now().Add(st.d); time.Now().Before(end); {
								time.Sleep(ls / 3)
								_ = j.Heartbeat(ctx)
							}
						case 5:
							time.Sleep(st.d)
						}
						return nil
					},
				})
				if err != nil {
					rt.Fatal(err)
				}
				qs = append(qs, q)
			}
			for _, q := range qs {
				for k := range jobs {
					if _, _, err := q.Add(ctx, k); err != nil {
						rt.Fatal(err)
					}
				}
			}
			if err := s.Start(ctx); err != nil {
				rt.Fatal(err)
			}
			if err := r.Start(ctx); err != nil {
				rt.Fatal(err)
			}
			time.Sleep(time.Minute)
			close(gate)
			time.Sleep(time.Minute)
			if err := r.Stop(ctx); err != nil {
				rt.Fatal(err)
			}
			st := r.Stats()
			var rescues, poisoned int
			for _, q := range qs {
				c, _ := q.Counts(ctx)
				if c.Live() != 0 {
					rt.Errorf("%s: counts %+v: entries left live", q.Name(), c)
				}
				poisoned += c.Poisoned
			}
			for e, err := range s.Inspector().List(ctx, sched.Query{}) {
				if err != nil {
					rt.Fatal(err)
				}
				rescues += e.Rescues
			}
			if err := s.Stop(ctx); err != nil {
				rt.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, p := range problems {
				rt.Error(p)
			}
			rl.mu.Lock()
			logged, loggedRunning, loggedPoisoned := rl.all, rl.running, rl.poisoned
			rl.mu.Unlock()
			if st.Rescued != logged || st.Poisoned != poisoned || loggedPoisoned != poisoned || loggedRunning != rescues {
				rt.Errorf("Stats %+v; logged %d rescues (%d running or poisoned), %d poisoned; the entries count %d rescues of runs, %d poisoned", st, logged, loggedRunning, loggedPoisoned, rescues, poisoned)
			}
			if int64(st.Rescued) != m.sum("rescues") || int64(st.Poisoned) != m.sum("poisoned") || int64(st.Alerts) != m.sum("alerts") {
				rt.Errorf("Stats %+v; metrics %d rescues, %d poisoned, %d alerts", st, m.sum("rescues"), m.sum("poisoned"), m.sum("alerts"))
			}
			if st.Abandoned != 0 {
				rt.Errorf("Stats %+v: handlers abandoned after the gate opened", st)
			}
		})
	})
}
