package main

import (
	"bytes"
	"testing"
	"time"
)

// A run time is printed as it is: @every counts from -from (or now), which
// may have a fraction of a second, and the runs keep it. The layout had no
// fraction: "@every 1s -from 00:00:00.5Z" printed 00:00:01Z and 00:00:02Z,
// half a second before the runs at 00:00:01.5Z and 00:00:02.5Z.
func TestCronPrintsFractionalRunTimes(t *testing.T) {
	t.Parallel()
	var out, errs bytes.Buffer
	args := []string{"@every 1s", "-n", "2", "-tz", "UTC", "-from", "2026-01-01T00:00:00.5Z"}
	want := "2026-01-01T00:00:01.5Z UTC\n2026-01-01T00:00:02.5Z UTC\n"
	if code := runCron(args, &out, &errs, time.Now()); code != 0 || out.String() != want {
		t.Errorf("runCron(%q) = %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", args, code, out.String(), want, errs.String())
	}
}
