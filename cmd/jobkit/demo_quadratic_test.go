package main

import (
	"context"
	"runtime"
	"testing"
)

// The demo's work grows with the jobs, not their square. Each failure line
// showed the head of the queue by copying the whole queue (Queued), under
// the queue's lock: with every job failing once, 10,000 jobs copied about
// 50 million names, some 800 MB; at the admitted million jobs (-work 0)
// the demo ran for half an hour instead of seconds. Not parallel, so that
// the allocation count is this test's alone.
func TestDemoWorkIsLinearInJobs(t *testing.T) {
	const jobs = 10000
	cfg := demoConfig{Jobs: jobs, Producers: 1, Workers: 1, Batch: 1, FlakyEvery: 1}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := runDemo(context.Background(), &countWriter{}, cfg); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	// A job's name, map entries, two takes and a failure line: about 2 KB
	// a job (11 KB with -race); copying the queue on each failure made it
	// about 90 KB.
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(32<<10*jobs); got > limit {
		t.Errorf("-jobs %d with every job failing once allocated %d MB (%d bytes a job), more than %d MB: each failure copies the whole queue",
			jobs, got>>20, got/jobs, limit>>20)
	}
}
