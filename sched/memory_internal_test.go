package sched

import (
	"context"
	"testing"
	"time"
)

// An Add whose key the backend's map cannot hash panics (the scheduler
// checks keys before; a backend used on its own does not), and leaves the
// backend usable: its lock is let go.
func TestMemoryAddOfAnUnhashableKeyLetsGoOfTheLock(t *testing.T) {
	m := NewMemory[int, any]()
	if err := m.Open(QueueInfo{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Add of a slice key did not panic")
			}
		}()
		_, _, _ = m.Add(context.Background(), NewEntry[int, any]{Key: []int{1}, Priority: 1, Now: time.Now()})
	}()
	if !m.mu.TryLock() {
		t.Fatal("the backend's lock is still held after the panicking Add")
	}
	m.mu.Unlock()
	if _, added, err := m.Add(context.Background(), NewEntry[int, any]{Key: "k", Priority: 1, Now: time.Now()}); err != nil || !added {
		t.Errorf("Add after the panic = %v, %v; want added", added, err)
	}
}
