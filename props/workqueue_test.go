package props

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/jobkit/jobkit/distinct/workqueue"
)

// wqModel is client-go's work queue, in a few lines: the queue in order,
// the items that need processing (dirty) and those handed out.
type wqModel struct {
	queue      []int
	dirty      map[int]bool
	processing map[int]bool
	down       bool
}

func (m *wqModel) add(x int) {
	if m.down || m.dirty[x] {
		return
	}
	m.dirty[x] = true
	if !m.processing[x] {
		m.queue = append(m.queue, x)
	}
}

func (m *wqModel) get() (int, bool) {
	if len(m.queue) == 0 {
		return 0, false
	}
	x := m.queue[0]
	m.queue = m.queue[1:]
	m.processing[x] = true
	delete(m.dirty, x)
	return x, true
}

func (m *wqModel) done(x int) {
	if !m.processing[x] {
		return
	}
	delete(m.processing, x)
	if m.dirty[x] {
		m.queue = append(m.queue, x)
	}
}

// TestWorkqueueMatchesModel drives distinct/workqueue, whose Get and Done
// reuse the distinct queue's batches and in-progress slots, against
// client-go's semantics: Get hands out what the model does, in order, and
// Len agrees, whatever mix of adds of queued and in-progress items, Dones
// (of items processed, done already, or never handed out) and shutdowns.
func TestWorkqueueMatchesModel(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		q := workqueue.NewTyped[int]()
		m := &wqModel{dirty: map[int]bool{}, processing: map[int]bool{}}
		item := rapid.IntRange(0, 9)
		var handed []int // items handed out, in progress or done
		t.Repeat(map[string]func(*rapid.T){
			"Add": func(t *rapid.T) {
				x := item.Draw(t, "x")
				q.Add(x)
				m.add(x)
			},
			"Get": func(t *rapid.T) {
				if len(m.queue) == 0 && !m.down {
					t.Skip("Get would wait")
				}
				got, shutdown := q.Get()
				want, ok := m.get()
				if shutdown == ok || (ok && got != want) {
					t.Fatalf("Get() = %d, %v; want %d, shutdown %v", got, shutdown, want, !ok)
				}
				if ok {
					handed = append(handed, got)
				}
			},
			"Done": func(t *rapid.T) {
				var x int
				if len(handed) > 0 && rapid.Bool().Draw(t, "handed") {
					x = rapid.SampledFrom(handed).Draw(t, "x")
				} else {
					x = item.Draw(t, "x")
				}
				q.Done(x)
				m.done(x)
			},
			"ShutDown": func(t *rapid.T) {
				if rapid.Bool().Draw(t, "drain") && len(m.processing) == 0 {
					q.ShutDownWithDrain() // returns at once: nothing in progress
				} else {
					q.ShutDown()
				}
				m.down = true
			},
			"": func(t *rapid.T) {
				if q.Len() != len(m.queue) || q.ShuttingDown() != m.down {
					t.Fatalf("Len() = %d, ShuttingDown() = %v; want %d, %v (queue %v)", q.Len(), q.ShuttingDown(), len(m.queue), m.down, m.queue)
				}
			},
		})
		// Drain: what is queued comes out in the model's order.
		q.ShutDown()
		m.down = true
		for {
			got, shutdown := q.Get()
			want, ok := m.get()
			if shutdown == ok || (ok && got != want) {
				t.Fatalf("draining: Get() = %d, %v; want %d, %v", got, shutdown, want, !ok)
			}
			if !ok {
				break
			}
			q.Done(got)
			m.done(got)
		}
	})
}
