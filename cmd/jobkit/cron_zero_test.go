package main

import (
	"bytes"
	"testing"
	"time"
)

// runCron never succeeds without printing a run time: a -from before the
// year 1 is refused. (The first run after 0000-12-31T23:59:30Z is
// 0001-01-01T00:00:00Z, time.Time's zero value, which runCron took for "no
// next run": it printed nothing, with status 0.)
func TestCronRunAtZeroTime(t *testing.T) {
	t.Parallel()
	for _, spec := range []string{"* * * * *", "@yearly", "0 0 1 1 *"} {
		var out, errs bytes.Buffer
		code := runCron([]string{spec, "-n", "2", "-tz", "UTC", "-from", "0000-12-31T23:59:30Z"}, &out, &errs, time.Now())
		if code == 0 && out.Len() == 0 || code != 0 && errs.Len() == 0 {
			t.Errorf("runCron(%q -from 0000-12-31T23:59:30Z) = 0 with no output and stderr %q: a success that prints no run time", spec, errs.String())
		}
	}
}
