package sched_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// replayBackend is sched's in-memory backend whose Expired can add claims
// of its own (as a shared backend reports other processes' claims) and,
// once replay is set, answers with the list it gave last: two reapers that
// read one report.
type replayBackend struct {
	sched.Backend[int, int]
	mu     sync.Mutex
	replay bool
	last   []sched.Claim[int, int]
	extra  []sched.Claim[int, int]
}

func (b *replayBackend) Expired(ctx context.Context, before time.Time, dst []sched.Claim[int, int]) ([]sched.Claim[int, int], error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.replay {
		return append(dst, b.last...), nil
	}
	out, err := b.Backend.Expired(ctx, before, dst)
	out = append(out, b.extra...)
	b.last = append(b.last[:0], out...)
	return out, err
}

// Reap rescues a lapsed claim once: a claim waiting in its batch that one
// Reap gave up is gone from the batch, and a second Reap that reads the
// same report of lapsed leases rescues (and reports) nothing more. The
// running claim beats, so that only the waiting one lapses.
func TestAWaitingClaimIsRescuedOnce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, in := rescuing(t, 1)
		be := &replayBackend{Backend: sched.NewMemory[int, int]()}
		done := make(chan struct{})
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Lease: time.Second, BatchSize: 2, Backend: be,
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				if j.Payload != 1 || j.Reruns > 0 {
					return nil
				}
				for { // a long run that keeps its lease
					select {
					case <-done:
						return nil
					case <-time.After(100 * time.Millisecond):
						if err := j.Heartbeat(ctx); err != nil {
							return err
						}
					}
				}
			},
		})
		must.Add(t, q, 1)
		waiting := must.Add(t, q, 2)
		start(t, s, func() { close(done) })
		time.Sleep(time.Minute) // the waiting claim's lease lapsed long ago
		rs, err := in.Reap(ctx, time.Now(), 0)
		if err != nil || len(rs) != 1 || rs[0].ID != waiting || rs[0].Running {
			t.Fatalf("first Reap = %+v, %v; want the waiting claim %d rescued", rs, err, waiting)
		}
		be.mu.Lock()
		be.replay = true
		be.mu.Unlock()
		if rs, err := in.Reap(ctx, time.Now(), 0); err != nil || len(rs) != 0 {
			t.Errorf("second Reap of the same report = %+v, %v; want nothing rescued again", rs, err)
		}
		if c := must.Counts(t, q); c.Pending+c.Awaiting+c.Running+c.Succeeded != 2 {
			t.Errorf("counts %+v: want the two entries, each once", c)
		}
	})
}

// A lapsed claim that no batch of this process holds is settled through
// the backend, which fences it; one whose entry is gone meanwhile (deleted
// by another process) is no error of Reap's and no rescue.
func TestReapOfAClaimWhoseEntryIsGoneIsNoError(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, in := rescuing(t, 1)
		be := &replayBackend{Backend: sched.NewMemory[int, int](), extra: []sched.Claim[int, int]{{ID: 1 << 40, Gen: 1}}}
		must.Queue(t, s, "q", sched.QueueConfig[int, int]{Backend: be, Handler: nop[int, int]})
		start(t, s, nil)
		if rs, err := in.Reap(ctx, time.Now().Add(time.Hour), 0); err != nil || len(rs) != 0 {
			t.Errorf("Reap = %+v, %v; want no error and nothing rescued", rs, err)
		}
	})
}

// beatingBackend is sched's in-memory backend whose Expired, once armed,
// lets the lapsed run beat (release) before the reaper acts on its report.
type beatingBackend struct {
	sched.Backend[int, int]
	armed   bool
	release chan struct{}
}

func (b *beatingBackend) Expired(ctx context.Context, before time.Time, dst []sched.Claim[int, int]) ([]sched.Claim[int, int], error) {
	out, err := b.Backend.Expired(ctx, before, dst)
	if b.armed && len(out) > 0 {
		b.armed = false
		close(b.release)
		synctest.Wait() // the run beat, and waits
	}
	return out, err
}

// A lease ends when it lapses: a heartbeat that renews it, after Expired
// reported it lapsed but before the reaper acts, keeps the run if the new
// lease does not end before the cutoff, now − grace (Reap rescues claims
// whose leases ended before it): renewed to exactly the cutoff, or, with a
// grace, to after the cutoff though before now.
func TestAHeartbeatToTheCutoffKeepsTheRun(t *testing.T) {
	t.Parallel()
	const lease = time.Second
	for _, c := range []struct {
		name  string
		after time.Duration // Reap's now, after the heartbeat's instant
		grace time.Duration
	}{
		{"exactly the cutoff", lease, 0},
		{"between the cutoff and now", lease + 10*time.Second - lease/2, 10 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				s, in := rescuing(t, 1)
				be := &beatingBackend{Backend: sched.NewMemory[int, int](), release: make(chan struct{})}
				done := make(chan struct{})
				beat := make(chan error, 1)
				q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
					Lease: lease, Backend: be,
					Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
						if j.Reruns > 0 {
							return nil // a run after a rescue: not the one under test
						}
						<-be.release
						beat <- j.Heartbeat(ctx) // renews to now + lease
						<-done
						return nil
					},
				})
				must.Add(t, q, 1)
				start(t, s, func() { close(done) })
				time.Sleep(time.Minute) // the lease from the run's start lapsed long ago
				synctest.Wait()
				be.armed = true
				rs, err := in.Reap(ctx, time.Now().Add(c.after), c.grace)
				if err := <-beat; err != nil {
					t.Fatalf("Heartbeat = %v, want nil", err)
				}
				if err != nil || len(rs) != 0 {
					t.Errorf("Reap = %+v, %v; want nothing rescued: the heartbeat renewed the lease to no earlier than the cutoff", rs, err)
				}
			})
		})
	}
}

// Reap reports every run it rescues, whichever of the live batches holds
// it: two hung runs in two batches are both rescued and both reported as
// running.
func TestReapReportsARescueInEveryBatch(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, in := rescuing(t, 2)
		release := make(chan struct{})
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Lease: time.Second, BatchSize: 1,
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				if j.Reruns > 0 {
					return nil
				}
				<-release // hangs, ignoring its context
				return nil
			},
		})
		a, b := must.Add(t, q, 1), must.Add(t, q, 2)
		start(t, s, func() { close(release) })
		synctest.Wait() // both run, each in a batch of its own
		rs, err := in.Reap(ctx, time.Now().Add(time.Hour), 0)
		got := map[sched.ID]bool{}
		for _, r := range rs {
			got[r.ID] = r.Running
		}
		if err != nil || len(rs) != 2 || !got[a] || !got[b] {
			t.Errorf("Reap = %+v, %v; want both running claims, %d and %d, rescued", rs, err, a, b)
		}
	})
}
