package sched_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
	"github.com/jobkit/jobkit/scope"
)

// A cap lowered while batches run applies as their runs end: once it is 1,
// a worker whose run ended while another batch's run goes on starts no
// further entry of its batch, which goes back to pending. (From mutation
// testing: batch.start without its cap check, and the check comparing
// running > cap instead of ≥, survived every test.)
func TestALoweredCapStopsTheNextStartOfARunningBatch(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 2, Logger: quiet})
		gates := map[int]chan struct{}{}
		for k := 1; k <= 4; k++ {
			gates[k] = make(chan struct{})
		}
		var (
			mu            sync.Mutex
			running, most int
			started       []int
		)
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			BatchSize: 2,
			Handler: func(_ context.Context, j *sched.Job[int, int]) error {
				mu.Lock()
				running++
				most = max(most, running)
				started = append(started, j.Key)
				mu.Unlock()
				<-gates[j.Key]
				mu.Lock()
				running--
				mu.Unlock()
				return nil
			},
		})
		q.Pause() // so that the loops take two batches of two
		for k := 1; k <= 4; k++ {
			must.Add(t, q, k)
		}
		q.Resume()
		synctest.Wait()
		mu.Lock()
		if running != 2 {
			mu.Unlock()
			t.Fatalf("%d running (started %v), want the first entries of two batches", running, started)
		}
		first := started[0] // the batch of first holds first+1: 1 and 2, or 3 and 4
		mu.Unlock()
		if err := q.SetMaxConcurrency(1); err != nil {
			t.Fatal(err)
		}
		close(gates[first])
		synctest.Wait()
		mu.Lock()
		if running != 1 {
			t.Errorf("%d running after the cap was lowered to 1 and a run ended (started %v)", running, started)
		}
		mu.Unlock()
		for k, g := range gates {
			if k != first {
				close(g)
			}
		}
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if len(started) != 4 || most != 2 {
			t.Errorf("started %v, at most %d at once; want all 4, at most 2 (before the cap was lowered)", started, most)
		}
		if c := must.Counts(t, q); c.Succeeded+c.Expired != 4 {
			t.Errorf("counts %+v, want 4 runs ended", c)
		}
	})
}

// MaxConcurrency bounds the entries claimed, awaiting or running, not just
// those running: a batch larger than the cap's room takes only the room.
// (From mutation testing: dispatch computing the room as cap − in flight
// + 1 survived every test: a worker runs its batch one entry at a time,
// so no more than the cap ran, but an entry sat claimed past the cap.)
func TestTheCapBoundsTheEntriesClaimed(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 2, Logger: quiet})
		gate := make(chan struct{})
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			MaxConcurrency: 1,
			BatchSize:      4,
			Handler: func(context.Context, *sched.Job[int, int]) error {
				<-gate
				return nil
			},
		})
		q.Pause()
		for k := 1; k <= 4; k++ {
			must.Add(t, q, k)
		}
		q.Resume()
		synctest.Wait()
		if c := must.Counts(t, q); c.Running != 1 || c.Awaiting != 0 || c.Pending != 3 {
			t.Errorf("counts %+v with a cap of 1; want 1 running, none awaiting, 3 pending", c)
		}
		close(gate)
		synctest.Wait()
		if c := must.Counts(t, q); c.Succeeded+c.Expired != 4 {
			t.Errorf("counts %+v, want 4 runs ended", c)
		}
	})
}

// capRace is a backend that lines up the two workers of
// TestTwoBatchesUnderALoweredCapStartOneRun: the Settles of the payloads
// in settleTogether wait until both are in Settle (so that both workers'
// runs have ended and none is counted running), and the Starts of the
// payloads in startTogether wait until both are in Start, or until a take's
// scope closed (a worker gave up its batch instead of starting one).
type capRace struct {
	sched.Backend[int, int]
	mu                            sync.Mutex
	settleTogether, startTogether map[int]bool
	settling, starting            int
	settled, started, closed      chan struct{}
	inStart, mostInStart          int // Starts of startTogether under way, and the most at once
}

// arrive counts one more goroutine at a meeting of two and returns the
// channel to wait on: closed by the second.
func (b *capRace) arrive(n *int, both chan struct{}) chan struct{} {
	if *n++; *n == 2 {
		close(both)
	}
	return both
}

func (b *capRace) Take(ctx context.Context, s *scope.Scope, r sched.TakeRequest, dst []sched.Claim[int, int]) ([]sched.Claim[int, int], error) {
	s.TryAdd(scope.FinalizerFunc(func(scope.Exit) error {
		b.mu.Lock()
		defer b.mu.Unlock()
		select {
		case <-b.closed:
		default:
			close(b.closed)
		}
		return nil
	}))
	return b.Backend.Take(ctx, s, r, dst)
}

func (b *capRace) Start(ctx context.Context, c *sched.Claim[int, int], now, lease time.Time) error {
	if !b.startTogether[c.Payload] {
		return b.Backend.Start(ctx, c, now, lease)
	}
	b.mu.Lock()
	b.inStart++
	b.mostInStart = max(b.mostInStart, b.inStart)
	both := b.arrive(&b.starting, b.started)
	b.mu.Unlock()
	select {
	case <-both:
	case <-b.closed:
	}
	b.mu.Lock()
	b.inStart--
	b.mu.Unlock()
	return b.Backend.Start(ctx, c, now, lease)
}

func (b *capRace) Settle(ctx context.Context, c *sched.Claim[int, int], o sched.Outcome) error {
	if b.settleTogether[c.Payload] {
		b.mu.Lock()
		both := b.arrive(&b.settling, b.settled)
		b.mu.Unlock()
		<-both
	}
	return b.Backend.Settle(ctx, c, o)
}

// Two workers whose runs end together under a cap lowered to 1 start one
// next run between them, not one each: the check of the cap and the count
// of the run are one step. The backend holds both workers' next Starts
// until both are under way (or one gave up its batch): with the check and
// the count apart (the count after the backend's Start), both passed the
// check with none running and both started. (From the flake of
// TestRandomManagementKeepsTheInvariants, 3 runs at once with a cap of 2.)
func TestTwoBatchesUnderALoweredCapStartOneRun(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 2, Logger: quiet})
		b := &capRace{
			Backend: sched.NewMemory[int, int](),
			// The queue is paused while 0–3 are added: the loops take
			// two batches, {0, 1} and {2, 3}.
			settleTogether: map[int]bool{0: true, 2: true},
			startTogether:  map[int]bool{1: true, 3: true},
			settled:        make(chan struct{}),
			started:        make(chan struct{}),
			closed:         make(chan struct{}),
		}
		release := make(chan struct{})
		var (
			mu            sync.Mutex
			running, most int
			ran           []int
		)
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Backend:   b,
			BatchSize: 2,
			Handler: func(_ context.Context, j *sched.Job[int, int]) error {
				mu.Lock()
				running++
				ran = append(ran, j.Payload)
				if j.Payload == 1 || j.Payload == 3 {
					most = max(most, running)
				}
				mu.Unlock()
				if j.Payload == 0 || j.Payload == 2 {
					<-release
				}
				mu.Lock()
				running--
				mu.Unlock()
				return nil
			},
		})
		q.Pause()
		for k := range 4 {
			must.Add(t, q, k)
		}
		q.Resume()
		synctest.Wait()
		mu.Lock()
		if running != 2 {
			mu.Unlock()
			t.Fatalf("%d running (ran %v), want 0 and 2, the first entries of two batches", running, ran)
		}
		mu.Unlock()
		if err := q.SetMaxConcurrency(1); err != nil {
			t.Fatal(err)
		}
		close(release)
		synctest.Wait()
		b.mu.Lock()
		if b.mostInStart != 1 {
			t.Errorf("%d of the entries 1 and 3 being started at once under a cap of 1", b.mostInStart)
		}
		b.mu.Unlock()
		mu.Lock()
		defer mu.Unlock()
		if len(ran) != 4 || most != 1 {
			t.Errorf("ran %v, 1 and 3 with %d running at most; want all 4, and 1 and 3 one at a time", ran, most)
		}
	})
}

// MaxConcurrency bounds the entries claimed by the batches taken after it
// was lowered: a worker that ends its batch while another worker's batch,
// taken under the higher cap, still holds its entries takes only the room
// the lowered cap leaves, not a batch as large as the lowered cap's share.
// (From mutation testing: dispatch computing the room as the cap, not the
// cap less the entries in flight, survived every test; no more than the cap
// ran, but an entry sat claimed past it.)
func TestALoweredCapBoundsTheNextBatchClaimed(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newScheduler(t, sched.Config{Workers: 2, Logger: quiet})
		gates := map[int]chan struct{}{}
		for k := 1; k <= 8; k++ {
			gates[k] = make(chan struct{})
		}
		var (
			mu      sync.Mutex
			started []int
		)
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			MaxConcurrency: 6, // 3 entries a batch with 2 workers
			BatchSize:      3,
			Handler: func(_ context.Context, j *sched.Job[int, int]) error {
				mu.Lock()
				started = append(started, j.Key)
				mu.Unlock()
				<-gates[j.Key]
				return nil
			},
		})
		q.Pause() // so that the loops take two batches of three: 1-3 and 4-6
		for k := 1; k <= 6; k++ {
			must.Add(t, q, k)
		}
		q.Resume()
		synctest.Wait()
		if c := must.Counts(t, q); c.Running != 2 || c.Awaiting != 4 {
			t.Fatalf("counts %+v, want two batches of three, the first entry of each running", c)
		}
		// Lowered to 4, a batch takes 2 (4 ÷ 2 workers); the room left
		// once the batch of 1-3 ends is 1, the batch of 4-6 holding 3.
		if err := q.SetMaxConcurrency(4); err != nil {
			t.Fatal(err)
		}
		must.Add(t, q, 7)
		must.Add(t, q, 8)
		for k := 1; k <= 3; k++ {
			close(gates[k])
		}
		synctest.Wait()
		if c := must.Counts(t, q); c.Awaiting+c.Running != 4 || c.Pending != 1 {
			mu.Lock()
			t.Errorf("counts %+v with a cap lowered to 4 (started %v); want 4 awaiting or running, 1 pending", c, started)
			mu.Unlock()
		}
		for k := 4; k <= 8; k++ {
			close(gates[k])
		}
		synctest.Wait()
		if c := must.Counts(t, q); c.Succeeded+c.Expired != 8 {
			t.Errorf("counts %+v, want 8 runs ended", c)
		}
	})
}
