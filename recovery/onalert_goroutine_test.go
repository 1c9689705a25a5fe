package recovery_test

import (
	"context"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/recovery"
	"github.com/jobkit/jobkit/sched"
)

// Config.OnAlert "is called with each alert, in the reaper's goroutine".
// An alert that a caller's Look raises is raised in the caller's
// goroutine: a hook's runtime.Goexit ends that goroutine, not the
// reaper's, and the Look never returns.
func TestOnAlertOfACallersLookRunsInTheCallersGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, err := sched.New(sched.Config{Workers: 1, Loops: 1, Logger: quiet})
		must(t, err)
		var onReaper, called atomic.Bool
		r, err := recovery.New(s, recovery.Config{StallThreshold: 1, TakenThreshold: -1, Logger: quiet,
			OnAlert: func(recovery.Alert) {
				called.Store(true)
				onReaper.Store(strings.Contains(string(debug.Stack()), "recovery.(*Reaper).loop"))
				runtime.Goexit()
			}})
		must(t, err)
		gate := make(chan struct{})
		stallable(t, s, gate) // the reaper is never started: only Look looks
		r.Look(ctx)
		time.Sleep(time.Second) // the looks of a stall span an Interval: the bubble's clock moves
		returned := make(chan bool, 1)
		go func() {
			ok := false
			defer func() { returned <- ok }()
			r.Look(ctx)
			ok = true
		}()
		ok := <-returned
		if !called.Load() {
			t.Fatal("no alert")
		}
		if !onReaper.Load() {
			t.Errorf("OnAlert ran outside the reaper's goroutine (the caller's Look returned: %v)", ok)
		}
		close(gate)
		must(t, s.Stop(ctx))
	})
}
