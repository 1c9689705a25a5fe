// Command jobkit runs a short producer/consumer demo of jobkit's distinct
// queue and scopes: producers submit jobs, most of them more than once (the
// duplicates are rejected); workers take batches inside scopes; flaky jobs
// fail on their first attempt and go back to their original place in the
// queue; every job completes exactly once.
//
// Usage:
//
//	go run ./cmd/jobkit [-jobs 24] [-workers 3] [-batch 4] [-flaky 6] [-work 2ms]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"
)

func main() {
	var cfg demoConfig
	flag.IntVar(&cfg.Jobs, "jobs", 24, "distinct jobs to submit")
	flag.IntVar(&cfg.Producers, "producers", 2, "producers; each submits every job, so all but the first submission of a job are duplicates")
	flag.IntVar(&cfg.Workers, "workers", 3, "workers taking batches")
	flag.IntVar(&cfg.Batch, "batch", 4, "most jobs a worker takes at once")
	flag.IntVar(&cfg.FlakyEvery, "flaky", 6, "every n-th job fails on its first attempt (0: none)")
	flag.DurationVar(&cfg.Work, "work", 2*time.Millisecond, "time a job takes")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := runDemo(ctx, os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "jobkit:", err)
		os.Exit(1)
	}
}
