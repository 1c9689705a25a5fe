package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jobkit/jobkit/cron"
)

// cronLayout is RFC 3339, with the fraction of a second if there is one
// (@every keeps that of its anchor), followed by the zone abbreviation.
const cronLayout = time.RFC3339Nano + " MST"

// maxCronRuns bounds -n.
const maxCronRuns = 10000

// runCron implements `jobkit cron "<spec>" [-n 5] [-tz Zone] [-from time]`:
// it prints the next n run times of spec, one a line (at most n: none after
// the year 9999, which RFC 3339 cannot write), and returns the exit
// status: 0, 2 with a message on stderr for a bad spec, zone or flag, or 1
// if stdout could not be written.
// Flags may come before or after the spec.
func runCron(args []string, stdout, stderr io.Writer, now time.Time) int {
	fs := flag.NewFlagSet("jobkit cron", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 5, "number of run times to print (1.."+fmt.Sprint(maxCronRuns)+")")
	tz := fs.String("tz", "Local", "IANA time zone the spec is read in, such as Europe/Berlin")
	from := fs.String("from", "", "print run times after this RFC 3339 time (default: now)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, `usage: jobkit cron "<spec>" [-n 5] [-tz Zone] [-from RFC3339]

Prints the next run times of a cron spec: five fields (minute hour
day-of-month month day-of-week), six with a leading seconds field, or a
descriptor (@hourly, @daily, @weekly, @monthly, @yearly, @every 1h30m;
@every counts from -from, or now).

flags:`)
		fs.PrintDefaults()
	}

	// The flag package stops at the first argument that is not a flag;
	// parse again after the spec so that flags may follow it.
	var specs []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		specs = append(specs, fs.Arg(0))
		args = fs.Args()[1:]
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "jobkit cron: "+format+"\n", a...)
		return 2
	}
	if len(specs) != 1 {
		fs.Usage()
		return fail("want one spec (quote it), got %d arguments", len(specs))
	}
	if *n < 1 || *n > maxCronRuns {
		return fail("-n %d: want 1..%d", *n, maxCronRuns)
	}
	loc, err := time.LoadLocation(*tz)
	if err != nil {
		return fail("-tz %q: %v", *tz, err)
	}
	if *from != "" {
		if now, err = time.Parse(time.RFC3339Nano, *from); err != nil {
			return fail("-from: %v", err)
		}
		if now.Before(time.Time{}) { // a run at the zero time would read as none
			return fail("-from %s: before year 1", *from)
		}
	}
	s, err := cron.Parse(specs[0], cron.WithLocation(loc), cron.WithAnchor(now))
	if err != nil {
		return fail("%s", strings.TrimPrefix(err.Error(), "cron: "))
	}
	t := now
	for range *n {
		// RFC 3339 has four-digit years: the listing ends before a time
		// after 9999, as it does when there is no next time.
		if t = s.Next(t); t.IsZero() || t.Year() > 9999 {
			break
		}
		if _, err := fmt.Fprintln(stdout, t.Format(cronLayout)); err != nil {
			fmt.Fprintf(stderr, "jobkit cron: %v\n", err)
			return 1
		}
	}
	return 0
}
