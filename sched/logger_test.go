package sched_test

import (
	"context"
	"log/slog"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/internal/logbuf"
	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// A Logger that panics or ends the goroutine (runtime.Goexit) as the
// scheduler logs a fault, here in a worker's way out after the backend's
// Start faulted, loses that record and nothing else: the worker still
// gives its batch back, every job runs, and Stop returns.
func TestABrokenLoggerStrandsNothing(t *testing.T) {
	t.Parallel()
	faults := map[string]func(){"panic": func() { panic("logger bug") }, "Goexit": runtime.Goexit}
	for logName, logFault := range faults {
		for startName, startFault := range faults {
			t.Run("logger="+logName+"/Start="+startName, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					var records atomic.Int64
					log := slog.New(onRecord(func(slog.Record) { records.Add(1); logFault() }))
					s := newScheduler(t, sched.Config{Workers: 1, Logger: log})
					b := &faultyRuns{Backend: sched.NewMemory[int, int](), in: "Start", fault: startFault}
					var runs atomic.Int64
					q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Backend: b, Handler: sleeper(0, &runs)})
					for i := range 5 {
						must.Add(t, q, i)
					}
					time.Sleep(time.Minute)
					synctest.Wait()
					if c := must.Counts(t, q); runs.Load() != 5 || c.Live() != 0 || records.Load() == 0 {
						t.Errorf("%d runs, counts %+v, %d records logged; want all 5 run, nothing live, the fault logged", runs.Load(), c, records.Load())
					}
				})
			})
		}
	}
}

// A Stop called by the Logger's handler for a record of a user's goroutine
// (logged through Scheduler.Logger) waits for the running handlers, as a
// Stop from that goroutine itself would: only a record of the scheduler's
// own goroutines makes it return at once.
func TestStopFromTheLoggerOnAUsersGoroutineWaits(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var s *sched.Scheduler
		stopped := make(chan error, 1)
		s = must.New(t, sched.Config{Workers: 1, Logger: slog.New(onRecord(func(slog.Record) { stopped <- s.Stop(context.Background()) }))})
		release := make(chan struct{})
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{Handler: func(context.Context, *sched.Job[int, int]) error {
			<-release
			return nil
		}})
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		must.Add(t, q, 1)
		synctest.Wait()
		go s.Logger().Info("a user's record")
		synctest.Wait()
		select {
		case err := <-stopped:
			t.Errorf("Stop from the Logger on a user's goroutine returned (%v) while a handler ran", err)
		default:
		}
		close(release)
		if err := <-stopped; err != nil {
			t.Errorf("Stop = %v once the handler returned", err)
		}
	})
}

// The guarded Logger keeps what the user's handler does: its level (Enabled),
// its attributes and groups.
func TestTheGuardedLoggerKeepsLevelsAttrsAndGroups(t *testing.T) {
	t.Parallel()
	var buf logbuf.Buffer
	s := must.New(t, sched.Config{Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	l := s.Logger().With("a", 1).WithGroup("g")
	l.Info("below the level")
	l.Warn("kept", "b", 2)
	got := buf.String()
	if strings.Contains(got, "below the level") || !strings.Contains(got, "a=1") || !strings.Contains(got, "g.b=2") {
		t.Errorf("logged %q, want only the warning, with a=1 and g.b=2", got)
	}
}
