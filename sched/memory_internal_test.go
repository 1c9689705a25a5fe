package sched

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"
)

// An Add whose key cannot be hashed (a slice in an any) or is not equal to
// itself (NaN) is refused with an error wrapping ErrInvalid, not a panic,
// and the backend stays usable. (The scheduler checks keys before; a
// backend used on its own does not.)
func TestMemoryRefusesKeysItCannotFind(t *testing.T) {
	m := NewMemory[int, any]()
	if err := m.Open(QueueInfo{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, k := range []any{[]int{1}, math.NaN(), struct{ F any }{math.NaN()}} {
		if _, added, err := m.Add(ctx, NewEntry[int, any]{Key: k, Priority: 1, Now: time.Now()}); !errors.Is(err, ErrInvalid) || added {
			t.Errorf("Add of key %v = %v, %v; want an error wrapping ErrInvalid", k, added, err)
		}
	}
	if !m.mu.TryLock() {
		t.Fatal("the backend's lock is held after the refused adds")
	}
	m.mu.Unlock()
	if _, added, err := m.Add(ctx, NewEntry[int, any]{Key: "k", Priority: 1, Now: time.Now()}); err != nil || !added {
		t.Errorf("Add after the refusals = %v, %v; want added", added, err)
	}
	if c, _ := m.Counts(ctx); c.Pending != 1 {
		t.Errorf("%d pending, want 1: a refused key was stored", c.Pending)
	}
}
