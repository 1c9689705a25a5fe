package cron

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// An entry dispatched while its job's run goes on (the run was rescued:
// its lease lapsed, as when the process stalls on a backend that several
// share, and its handler ignores the cancelled context) waits a second at
// least, not until the job's next time once that has passed. Before, begin
// and the store snoozed it until that past time, and it came back at once,
// for as long as the run went on: a worker spun.
func TestAnEntryDispatchedDuringItsRunDoesNotComeBackAtOnce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e, err := New(Config{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Start(ctx); err != nil {
			t.Fatal(err)
		}
		release := make(chan struct{})
		running := make(chan struct{})
		every, err := Every(time.Second, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		first := true
		if err := e.Register(ctx, "job", every, func(context.Context, time.Time) error {
			if first {
				first = false
				close(running)
				<-release
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		<-running
		time.Sleep(5 * time.Second) // the job's next times pass while it runs
		now := e.now()
		r, wake := e.begin("job") // as the entry, put back by a rescue, is dispatched
		if r.j != nil {
			t.Fatalf("a second run of the job began while the first went on")
		}
		if wake.Before(now.Add(time.Second)) {
			t.Errorf("the entry dispatched during the run snoozes until %v, %v after now: it would come back at once; want %v at least",
				wake, wake.Sub(now), time.Second)
		}
		close(release)
		synctest.Wait()
		if info, _ := e.Job("job"); info.Running {
			t.Errorf("the job still runs after its handler returned: %+v", info)
		}
		if err := e.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	})
}
