package cron_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/jobkit/jobkit/cron"
)

// A daily job at 02:30 in New York across the spring-forward day: 02:30 does
// not exist on 8 March 2026, so the job runs once at 03:00 EDT, the first
// instant after the gap.
func Example() {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		panic(err)
	}
	s, err := cron.Parse("30 2 * * *", cron.WithLocation(ny))
	if err != nil {
		panic(err)
	}
	t := time.Date(2026, 3, 7, 12, 0, 0, 0, ny)
	for range 3 {
		t = s.Next(t)
		fmt.Println(t.Format("Mon 2006-01-02 15:04 MST"))
	}
	// Output:
	// Sun 2026-03-08 03:00 EDT
	// Mon 2026-03-09 02:30 EDT
	// Tue 2026-03-10 02:30 EDT
}

// An hourly job follows real time: on the fall-back day 01:00 happens twice,
// an hour apart, and the job runs at both.
func Example_hourly() {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		panic(err)
	}
	s, err := cron.Parse("@hourly", cron.WithLocation(ny))
	if err != nil {
		panic(err)
	}
	t := time.Date(2026, 11, 1, 0, 30, 0, 0, ny)
	for range 3 {
		t = s.Next(t)
		fmt.Println(t.Format(time.RFC3339), t.Format("MST"))
	}
	// Output:
	// 2026-11-01T01:00:00-04:00 EDT
	// 2026-11-01T01:00:00-05:00 EST
	// 2026-11-01T02:00:00-05:00 EST
}

// After its run settles, a job asks Due what to run: here a job every 15
// minutes whose process was down from 10:00 to 11:07 catches up its two
// latest missed runs, then waits for 11:15.
func ExampleDue() {
	s, err := cron.Parse("*/15 * * * *", cron.WithLocation(time.UTC))
	if err != nil {
		panic(err)
	}
	policy, err := cron.RunEach(2)
	if err != nil {
		panic(err)
	}
	last := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC) // scheduled time of the last run
	now := time.Date(2026, 1, 1, 11, 7, 0, 0, time.UTC)
	runs, next := cron.Due(s, last, now, policy)
	for _, r := range runs {
		fmt.Println("catch up", r.Format("15:04"))
	}
	fmt.Println("next", next.Format("15:04"))
	// Output:
	// catch up 10:45
	// catch up 11:00
	// next 11:15
}

// Every runs at a fixed rate from its anchor, here the time a job was
// registered.
func ExampleEvery() {
	registered := time.Date(2026, 1, 1, 9, 10, 0, 0, time.UTC)
	s, err := cron.Every(40*time.Minute, registered)
	if err != nil {
		panic(err)
	}
	t := registered
	for range 3 {
		t = s.Next(t)
		fmt.Println(t.Format("15:04"))
	}
	// Output:
	// 09:50
	// 10:30
	// 11:10
}

// Parse refuses specs it cannot use with errors, never panics.
func ExampleParse_errors() {
	for _, spec := range []string{"0 0 30 2 *", "TZ=UTC", "@every 100ms", "61 * * * *"} {
		_, err := cron.Parse(spec)
		fmt.Println(errors.Is(err, cron.ErrInvalidSpec), err)
	}
	// Output:
	// true cron: invalid spec "0 0 30 2 *": never fires: no month it allows has a day it allows
	// true cron: invalid spec "TZ=UTC": no schedule after the zone prefix
	// true cron: invalid spec "@every 100ms": invalid interval: 100ms is below one second
	// true cron: invalid spec "61 * * * *": end of range (61) above maximum (59): 61
}
