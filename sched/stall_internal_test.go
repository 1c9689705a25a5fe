package sched

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// dump describes the memory backend's pending structures.
func (m *Memory[T, K]) dump() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := fmt.Sprintf("counts %+v top %d takes %d\n", m.counts, m.top(), len(m.takes))
	for p, q := range m.levels {
		if q != nil || m.queued[p] != 0 {
			n := -1
			if q != nil {
				n = q.Len()
			}
			out += fmt.Sprintf("level %d: counted %d, distinct holds %d\n", p, m.queued[p], n)
		}
	}
	for _, e := range m.order.s {
		if e == nil {
			continue
		}
		if e.state.Live() {
			out += fmt.Sprintf("entry %d: %v level %d take %v held %v gen %d\n", e.id, e.state, e.unit.level, e.take != nil, e.held != nil, e.gen)
		}
	}
	return out
}

// TestRandomRescuesNeverStall runs random jobs (failing, panicking,
// hanging, slow with or without heartbeats) with rescues under synctest,
// and checks that after two minutes no entry is left live: a regression
// test of a count of queued units that drifted when a take found a unit
// put back while another take was closing, and left entries pending for
// ever.
func TestRandomRescuesNeverStall(t *testing.T) {
	t.Parallel()
	for seed := range 100 {
		synctest.Test(t, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(seed), 9))
			ctx := context.Background()
			s, _ := New(Config{Workers: 1 + r.IntN(4), Loops: 1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			in := s.Inspector()
			in.EnableRescue()
			gate := make(chan struct{})
			var runs sync.Map
			mem := NewMemory[int, int]()
			jobs := 1 + r.IntN(12)
			script := make([][]int, jobs)
			for k := range script {
				for range 1 + r.IntN(6) {
					script[k] = append(script[k], r.IntN(6))
				}
			}
			q, _ := NewQueue(s, "q", QueueConfig[int, int]{Backend: mem, Lease: time.Second, MaxRescues: 2,
				Retry: &RetryPolicy{MaxRetries: 3, Base: time.Second},
				Handler: func(ctx context.Context, j *Job[int, int]) error {
					n, _ := runs.LoadOrStore(j.Key, new(atomic.Int64))
					i := int(n.(*atomic.Int64).Add(1)) - 1
					b := 0
					if i < len(script[j.Key]) {
						b = script[j.Key][i]
					}
					switch b {
					case 1:
						return errors.New("x")
					case 2:
						panic("p")
					case 3:
						<-gate
					case 4:
						time.Sleep(1500 * time.Millisecond)
						j.Heartbeat(ctx)
					case 5:
						time.Sleep(2 * time.Second)
					}
					return nil
				}})
			for k := range jobs {
				q.Add(ctx, k)
			}
			s.Start(ctx)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					case <-time.After(100 * time.Millisecond):
					}
					in.Reap(ctx, time.Now(), 200*time.Millisecond)
				}
			})
			time.Sleep(2 * time.Minute)
			c, _ := q.Counts(ctx)
			if c.Live() != 0 {
				t.Errorf("seed %d: stalled: %+v\n%s", seed, c, mem.dump())
			}
			close(stop)
			wg.Wait()
			close(gate)
			synctest.Wait()
			s.Stop(ctx)
		})
		if t.Failed() {
			return
		}
	}
}
