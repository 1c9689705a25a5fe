package governor

import (
	"context"
	"runtime"
	"strings"
	"testing"
)

// blockedInAcquireOnMu reports whether a goroutine waits for a Governor's
// lock inside Acquire: the canceller of a waiter, woken by its context.
func blockedInAcquireOnMu() bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "[sync.Mutex.Lock") && strings.Contains(g, "governor.(*Governor).Acquire(") {
			return true
		}
	}
	return false
}

// A waiter granted while its context is cancelled hands its grant on, and
// gives back the memory it reserved. A sample applied in between has
// replaced every reservation with its own figures: giving the memory back
// on top of them counted it twice, and let Weights reserve more memory than
// the reading leaves (1600 bytes under a room of 1000 here).
func TestCancelledGrantAfterASampleReservesNoMore(t *testing.T) {
	r := Reading{CPUCores: 1, MemoryLimit: 1000, MemoryAvailable: 1000}
	g, err := New(Config{Slots: 4, MaxMemoryPercent: 100, Sampler: SamplerFunc(func(context.Context) (Reading, error) { return r, nil })})
	if err != nil {
		t.Fatal(err)
	}
	g.apply(sampled{r: r}) // no sampling goroutine: the test applies the samples
	held, ok := g.TryAcquire("", Weight{Memory: 600})
	if !ok {
		t.Fatal("TryAcquire of 600 bytes of 1000: refused")
	}
	defer held.Release()

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		p, err := g.Acquire(ctx, "", Weight{Memory: 600})
		p.Release()
		done <- err
	}()
	for g.Snapshot().Waiting != 1 {
		runtime.Gosched()
	}

	g.mu.Lock()
	cancel()
	for !blockedInAcquireOnMu() { // the waiter took the cancelled branch
		runtime.Gosched()
	}
	// A sample (the work of held has not shown yet) grants the waiter,
	// which reserves 600 of the room of 1000; a second sample then
	// replaces the reservations with its own figures, as apply does.
	g.updateLocked()
	g.grantLocked()
	g.updateLocked()
	g.mu.Unlock()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Acquire = %v, want context.Canceled", err)
	}

	if room := g.memRoom.Load(); room > 1000 {
		t.Errorf("memory room = %d after the cancelled grant, want at most the 1000 bytes the reading leaves", room)
	}
	a, okA := g.TryAcquire("", Weight{Memory: 1000})
	b, okB := g.TryAcquire("", Weight{Memory: 600})
	a.Release()
	b.Release()
	if okA && okB {
		t.Error("TryAcquire of 1000 and then 600 bytes both granted under a reading that leaves 1000")
	}
}
