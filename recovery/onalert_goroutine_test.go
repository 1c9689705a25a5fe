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

// Config.OnAlert "is called with each alert, in the goroutine of the look
// that raised it: the reaper's, or that of a caller of Look", and after a
// runtime.Goexit in it "a caller's Look ends with the caller's goroutine".
// (The doc said once that it always ran in the reaper's goroutine, and
// that a new one went on after a Goexit.)
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
		if onReaper.Load() || ok {
			t.Errorf("OnAlert of a caller's Look: in the reaper's goroutine %v; the Look returned after the hook's Goexit %v; want neither", onReaper.Load(), ok)
		}
		close(gate)
		must(t, s.Stop(ctx))
	})
}
