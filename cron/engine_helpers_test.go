package cron_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jobkit/jobkit/cron"
)

// runRec is one run of a job as its handler saw it.
type runRec struct {
	Scheduled, Start, End time.Time
}

// runLog records the runs of jobs and the overlaps of runs of one job.
type runLog struct {
	mu       sync.Mutex
	runs     map[string][]runRec
	busy     map[string]bool
	overlaps []string
}

func newRunLog() *runLog {
	return &runLog{runs: make(map[string][]runRec), busy: make(map[string]bool)}
}

// fn returns a handler for job name that records each run and then calls
// body (if not nil) with the run's index among the job's runs.
func (l *runLog) fn(name string, body func(ctx context.Context, at time.Time, i int) error) cron.Func {
	return func(ctx context.Context, at time.Time) error {
		l.mu.Lock()
		if l.busy[name] {
			l.overlaps = append(l.overlaps, fmt.Sprintf("%s: run for %v started during another", name, at))
		}
		l.busy[name] = true
		i := len(l.runs[name])
		l.runs[name] = append(l.runs[name], runRec{Scheduled: at, Start: time.Now()})
		l.mu.Unlock()
		defer func() {
			l.mu.Lock()
			l.busy[name] = false
			l.runs[name][i].End = time.Now()
			l.mu.Unlock()
		}()
		if body != nil {
			return body(ctx, at, i)
		}
		return nil
	}
}

// sleeper returns a body that sleeps d(i) for run i.
func sleeper(d func(i int) time.Duration) func(context.Context, time.Time, int) error {
	return func(_ context.Context, _ time.Time, i int) error {
		time.Sleep(d(i))
		return nil
	}
}

func (l *runLog) get(name string) []runRec {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.runs[name])
}

func (l *runLog) checkNoOverlap(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, o := range l.overlaps {
		t.Error(o)
	}
}

// scheduled returns the scheduled times of runs, formatted with layout in
// their own location.
func scheduled(runs []runRec) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.Scheduled.Format(layout)
	}
	return out
}

// startEngine returns a started engine with cfg that the test stops at its
// end (inside the synctest bubble).
func startEngine(t *testing.T, cfg cron.Config) *cron.Engine {
	t.Helper()
	e, err := cron.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Stop(context.Background()); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return e
}

// sleepUntil sleeps until t (in a synctest bubble, fake time jumps there).
func sleepUntil(t time.Time) { time.Sleep(time.Until(t)) }

// enumerate returns the activations of s in (from, to], formatted.
func enumerate(s cron.Schedule, from, to time.Time) []string {
	var out []string
	for a := s.Next(from); !a.IsZero() && !a.After(to); a = s.Next(a) {
		out = append(out, a.Format(layout))
	}
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func equalStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got %d %q\nwant %d %q", what, len(got), got, len(want), want)
	}
}
