package main

import (
	"context"
	"testing"

	"github.com/jobkit/jobkit/internal/testkit"
)

// countWriter counts what is written to it.
type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// The demo's output grows with the jobs, not their square: a failure line
// names the first jobs queued, not all of them. Before, each listed the
// whole queue, so the output grew with jobs × failures: about 12 MB at
// 4,000 jobs, about 0.8 TB at the admitted million.
func TestDemoOutputIsLinearInJobs(t *testing.T) {
	t.Parallel()
	const jobs = 4000
	var w countWriter
	cfg := demoConfig{Jobs: jobs, Producers: 1, Workers: 3, Batch: 4, FlakyEvery: 6}
	if err := runDemo(context.Background(), &w, cfg); err != nil {
		t.Fatal(err)
	}
	// A line per batch taken and per failure is well under 300 bytes a job.
	if limit := int64(300 * jobs); w.n > limit {
		t.Errorf("-jobs %d wrote %d bytes (%d a job), more than %d: each failure line prints the whole queue", jobs, w.n, w.n/jobs, limit)
	}
}

// SIGINT (a cancelled ctx) stops the demo promptly while the producers
// submit. Before, they never looked at ctx: with admitted flags (-jobs
// 1000000 -producers 4096: 4·10⁹ Adds) Ctrl-C was ignored until every
// submission was made, and NotifyContext had taken away SIGINT's default
// of killing the process.
func TestDemoProducersStopWhenCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	testkit.Within(t, "runDemo with a cancelled context during submission", func() {
		if err := runDemo(ctx, &countWriter{}, demoConfig{Jobs: demoMaxJobs, Producers: demoMaxCount, Workers: 1, Batch: 1}); err == nil {
			t.Error("runDemo with a cancelled context returned nil, want its error")
		}
	})
}
