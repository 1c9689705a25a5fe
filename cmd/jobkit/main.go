// Command jobkit runs a short demo of jobkit in two parts.
//
// The first part shows the distinct queue and scopes: producers submit
// jobs, most of them more than once (the duplicates are rejected); workers
// take batches inside scopes; flaky jobs fail on their first attempt and go
// back to their original place in the queue; every job completes exactly
// once. The flags other than -http size this part.
//
// The second part shows the scheduler (package sched): two queues of
// different priorities and caps share the workers under a governor; one job
// fails once and is retried after a delay, one fails for good and ends in
// the error queue, one is snoozed, one runs out of retries; it ends with the
// error queue and a summary line per queue. With -http it serves the
// scheduler's management API (package sched/schedhttp, read-only) while it
// runs, and afterwards until interrupted.
//
// Usage:
//
//	go run ./cmd/jobkit [-jobs 24] [-workers 3] [-batch 4] [-producers 2] [-flaky 6] [-work 2ms] [-http :8080]
//
// A flag out of range, or an -http address that cannot be listened on, is
// refused at once, before the first part, with exit status 2, as a flag
// that does not parse is.
//
// The cron subcommand prints the next run times of a cron spec:
//
//	go run ./cmd/jobkit cron "<spec>" [-n 5] [-tz Zone] [-from RFC3339]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "cron" {
		os.Exit(runCron(os.Args[2:], os.Stdout, os.Stderr, time.Now()))
	}
	var cfg demoConfig
	var scfg schedConfig
	flag.IntVar(&cfg.Jobs, "jobs", 24, "distinct jobs to submit (first part)")
	flag.IntVar(&cfg.Producers, "producers", 2, "producers; each submits every job, so all but the first submission of a job are duplicates (first part)")
	flag.IntVar(&cfg.Workers, "workers", 3, "workers taking batches (first part)")
	flag.IntVar(&cfg.Batch, "batch", 4, "most jobs a worker takes at once (first part)")
	flag.IntVar(&cfg.FlakyEvery, "flaky", 6, "every n-th job fails on its first attempt (0: none) (first part)")
	flag.DurationVar(&cfg.Work, "work", 2*time.Millisecond, "time a job takes (first part)")
	flag.StringVar(&scfg.HTTP, "http", "", "serve the scheduler's management API on this address, such as :8080, while the second part runs and after it until interrupted")
	flag.Usage = func() {
		out := flag.CommandLine.Output()
		fmt.Fprintln(out, `Usage of jobkit: a demo of jobkit in two parts (distinct, then sched)

  jobkit [flags]
  jobkit cron "<spec>" [-n 5] [-tz Zone] [-from RFC3339]   the next run times of a cron spec (jobkit cron -h)

flags:`)
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "jobkit: unexpected argument %q (the one subcommand, cron, comes first)\n", flag.Arg(0))
		flag.Usage()
		os.Exit(2)
	}

	// Refuse a bad flag now, as the flag package does one that does not
	// parse, not once the first part has begun or run.
	if err := cfg.validate(); err != nil {
		usageError(err)
	}
	if scfg.HTTP != "" {
		ln, err := net.Listen("tcp", scfg.HTTP)
		if err != nil {
			usageError(fmt.Errorf("-http: %w", err))
		}
		scfg.listener = ln
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	fmt.Println("== distinct: producers and workers on one deduplicating queue")
	if err := runDemo(ctx, os.Stdout, cfg); err != nil {
		exit(ctx, err)
	}
	fmt.Println("\n== sched: queues with priorities and caps, a governor, retries, snoozes, the error queue")
	if err := runSched(ctx, os.Stdout, scfg); err != nil {
		exit(ctx, err)
	}
}

// usageError reports err, a bad flag, and exits with 2, as the flag
// package does for a flag that does not parse.
func usageError(err error) {
	fmt.Fprintln(os.Stderr, "jobkit:", err)
	fmt.Fprintln(os.Stderr, "run jobkit -h for usage")
	os.Exit(2)
}

// exit reports err and exits: with 130, the shell's status for SIGINT, if
// the demo was interrupted, and 1 otherwise.
func exit(ctx context.Context, err error) {
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "jobkit: interrupted")
		os.Exit(130)
	}
	fmt.Fprintln(os.Stderr, "jobkit:", err)
	os.Exit(1)
}
