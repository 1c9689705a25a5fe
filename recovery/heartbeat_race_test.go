package recovery_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
)

// The package doc: "a run is rescued no sooner than lease + Grace after its
// last heartbeat". A heartbeat that the backend accepts after Expired
// reported the lease lapsed, but before the reaper acts on the report,
// renews the lease: the run is not rescued.
func TestReaperRacingAHeartbeatRescuesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, r := newRacedReaper(t)
		gate := make(chan struct{})
		beat := make(chan error, 1)
		be := &racingBackend{Backend: sched.NewMemory[int, int](), release: make(chan struct{})}
		q, err := sched.NewQueue(s, "q", sched.QueueConfig[int, int]{
			Lease: time.Second, Backend: be, Retention: &keep,
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				<-be.release // late, but it beats before the reaper acts
				beat <- j.Heartbeat(ctx)
				select {
				case <-gate:
				case <-ctx.Done():
				}
				return nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := q.Add(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		be.armed = true
		r.Look(ctx)
		if err := <-beat; err != nil {
			t.Fatalf("Heartbeat: %v", err)
		}
		if st := r.Stats(); st.Rescued != 0 {
			t.Errorf("Stats().Rescued = %d, want 0: the run was rescued right after its heartbeat renewed its lease", st.Rescued)
		}
		close(gate)
		if err := s.Stop(ctx); err != nil {
			t.Error(err)
		}
	})
}
