package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// failWriter fails every write, as stdout does on a full disk or a closed
// descriptor.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// A listing that could not be written is a failure: a script reading it
// must not take a truncated or empty listing for the whole. runCron ignored
// the write errors and returned 0 (jobkit cron "* * * * *" >/dev/full: exit
// status 0).
func TestCronReportsWriteError(t *testing.T) {
	t.Parallel()
	var errs bytes.Buffer
	code := runCron([]string{"* * * * *", "-tz", "UTC"}, failWriter{}, &errs, time.Now())
	if code == 0 || !strings.Contains(errs.String(), "no space left on device") {
		t.Errorf("runCron with a failing stdout = %d, stderr %q; want non-zero and the write error", code, errs.String())
	}
}
