package cron_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/cron"
	"github.com/jobkit/jobkit/internal/testkit"
	"github.com/jobkit/jobkit/scope"
)

// Under GODEBUG=panicnil=1 (a setting Go keeps for old code) a job
// function that panics with nil, which recover cannot tell from
// runtime.Goexit, fails its run as a Goexit does (TestEngine_Failures):
// the panic is stopped and the call returns, but it is no success.
func TestAJobThatPanicsNilFailsItsRun(t *testing.T) {
	if testkit.InChild(t, "GODEBUG=panicnil=1") {
		synctest.Test(t, func(t *testing.T) {
			ctx := context.Background()
			sleepUntil(at(0, 0).Add(30 * time.Second))
			e := startEngine(t, cron.Config{})
			must(t, e.RegisterSpec(ctx, "job", "* * * * *", func(context.Context, time.Time) error {
				panic(testkit.NilValue())
			}, cron.WithLocation(time.UTC)))
			sleepUntil(at(0, 1).Add(30 * time.Second))
			info, _ := e.Job("job")
			if info.Runs != 1 || info.Failures != 1 || !errors.Is(info.LastErr, scope.ErrGoexit) {
				t.Errorf("after its run: Runs %d, Failures %d, LastErr %v; want 1 run, failed with ErrGoexit", info.Runs, info.Failures, info.LastErr)
			}
		})
	}
}
