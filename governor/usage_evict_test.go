package governor_test

import (
	"context"
	"log/slog"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/governor"
)

func heapAlloc() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestUsageKeysEvicted checks that the account of a key is dropped once the
// key has been idle for a full usage window, so that the memory a Governor
// keeps follows the live key set: 100,000 keys used once cost nothing a
// window later. Keys still held, or used within the window, stay.
//
// It measures the heap, so it does not run in parallel with other tests.
func TestUsageKeysEvicted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const keys = 100_000
		g, _ := setup(t, governor.Config{Slots: 4, UsageWindow: time.Minute}, reading(10, 100))
		held, _ := g.TryAcquire("held", governor.Weight{})
		before := heapAlloc()
		for i := range keys {
			p, ok := g.TryAcquire(strconv.Itoa(i), governor.Weight{})
			if !ok {
				t.Fatal("TryAcquire refused")
			}
			p.Release()
		}
		grown := heapAlloc()
		if n := g.Snapshot().Keys; n != keys+1 {
			t.Errorf("Keys = %d, want %d", n, keys+1)
		}
		t.Logf("%d keys: heap %+d KiB", keys, (int64(grown)-int64(before))/1024)

		time.Sleep(time.Minute) // idle for less than a window and its oldest bucket
		synctest.Wait()
		if n := g.Snapshot().Keys; n != keys+1 {
			t.Errorf("Keys after 60s = %d, want %d: evicted before their usage left the window", n, keys+1)
		}
		recent, _ := g.TryAcquire("recent", governor.Weight{})
		time.Sleep(time.Second)
		recent.Release()
		if got := g.Usage("7"); got != 0 {
			t.Errorf("Usage of a key idle for 60s = %v, want 0", got)
		}

		// Evicted within a quarter of a window (and an interval) after 61s.
		time.Sleep(20 * time.Second)
		synctest.Wait()
		if n := g.Snapshot().Keys; n != 2 {
			t.Errorf("Keys a window after their last use = %d, want 2 (held, recent)", n)
		}
		after := heapAlloc()
		t.Logf("after eviction: heap %+d KiB", (int64(after)-int64(before))/1024)
		if after > before+8<<20 {
			t.Errorf("heap %d MiB above what it was before %d keys were used, a window after their last use", (after-before)>>20, keys)
		}
		if got := g.Usage("held"); got != time.Minute {
			t.Errorf("Usage of a key held for 81s = %v, want 1m", got)
		}
		if got := g.Usage("recent"); got != time.Second {
			t.Errorf("Usage of a key used within the window = %v, want 1s", got)
		}
		// A key used again after eviction starts afresh.
		p, _ := g.TryAcquire("7", governor.Weight{})
		time.Sleep(2 * time.Second)
		p.Release()
		if got := g.Usage("7"); got != 2*time.Second {
			t.Errorf("Usage of an evicted key used again = %v, want 2s", got)
		}
		held.Release()
	})
}

// TestUsageEvictionRace uses keys from many goroutines while their
// accounts are evicted, with a window of a few milliseconds: a key that is
// held must never lose its account, and nothing may be charged twice or lost.
func TestUsageEvictionRace(t *testing.T) {
	t.Parallel()
	f := &fakeSampler{r: reading(10, 100)}
	g, err := governor.New(governor.Config{Slots: 64, Sampler: f, Interval: time.Millisecond, UsageWindow: 6 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer g.Stop(context.Background())
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				key := strconv.Itoa((w*7 + i) % 5)
				p, ok := g.TryAcquire(key, governor.Weight{})
				if !ok {
					t.Error("TryAcquire refused")
					return
				}
				if u := g.Usage(key); u < 0 || u > 64*6*time.Millisecond {
					t.Errorf("Usage(%q) = %v", key, u)
				}
				p.Release()
				if i%50 == 0 {
					time.Sleep(10 * time.Millisecond) // idle long enough to be evicted meanwhile
				}
			}
		})
	}
	// A key held for longer than the window keeps its account: its usage is
	// the whole window, less at most a bucket of rounding.
	wg.Go(func() {
		for range 20 {
			p, _ := g.TryAcquire("0", governor.Weight{})
			time.Sleep(20 * time.Millisecond)
			if u := g.Usage("0"); u < 6*time.Millisecond-100*time.Microsecond {
				t.Errorf("Usage of a key held for 20ms, window 6ms = %v", u)
			}
			p.Release()
		}
	})
	wg.Wait()
	if s := g.Snapshot(); s.SlotsInUse != 0 || s.Keys > 5 {
		t.Errorf("Snapshot at the end = %+v, want nothing held, at most 5 keys", s)
	}
}
