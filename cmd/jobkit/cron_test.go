package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
	_ "time/tzdata"
)

func TestCronPrintsRunTimes(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"30 2 * * *", "-n", "3", "-tz", "America/New_York", "-from", "2026-03-07T12:00:00-05:00"},
			"2026-03-08T03:00:00-04:00 EDT\n2026-03-09T02:30:00-04:00 EDT\n2026-03-10T02:30:00-04:00 EDT\n"},
		// Flags before the spec, and the default -n of 5.
		{[]string{"-tz", "America/New_York", "-from", "2026-11-01T00:30:00-04:00", "@hourly"},
			"2026-11-01T01:00:00-04:00 EDT\n2026-11-01T01:00:00-05:00 EST\n2026-11-01T02:00:00-05:00 EST\n" +
				"2026-11-01T03:00:00-05:00 EST\n2026-11-01T04:00:00-05:00 EST\n"},
		// Without -from: from now. @every counts from it.
		{[]string{"@every 90m", "-n", "2", "-tz", "UTC"}, "2026-01-01T01:30:00Z UTC\n2026-01-01T03:00:00Z UTC\n"},
		{[]string{"-n=1", "-tz=Asia/Kolkata", "0 9 * * *"}, "2026-01-01T09:00:00+05:30 IST\n"},
		{[]string{"-n", "1", "-tz", "UTC", "CRON_TZ=Australia/Lord_Howe 15 2 * * *", "-from", "2026-10-03T12:00:00+10:30"},
			"2026-10-04T02:30:00+11:00 +11\n"},
		// RFC 3339 has four-digit years: the listing stops at the end of 9999.
		{[]string{"0 0 1 1 *", "-n", "3", "-tz", "UTC", "-from", "9998-06-01T00:00:00Z"},
			"9999-01-01T00:00:00Z UTC\n"},
	}
	for _, c := range cases {
		var out, errs bytes.Buffer
		if code := runCron(c.args, &out, &errs, now); code != 0 || out.String() != c.want || errs.Len() != 0 {
			t.Errorf("runCron(%q) = %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", c.args, code, out.String(), c.want, errs.String())
		}
	}
}

func TestCronRejectsBadInput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		want string // in stderr
	}{
		{[]string{"0 0 30 2 *"}, "jobkit cron: invalid spec \"0 0 30 2 *\": never fires"},
		{[]string{"TZ=UTC"}, "invalid spec \"TZ=UTC\""},
		{[]string{"CRON_TZ="}, "invalid spec"},
		{[]string{"@every 10ms"}, "below one second"},
		{[]string{"61 * * * *"}, "above maximum"},
		{[]string{"* * * * *", "-tz", "Mars/Olympus"}, "-tz \"Mars/Olympus\": unknown time zone"},
		{[]string{"* * * * *", "-n", "0"}, "-n 0: want 1..10000"},
		{[]string{"* * * * *", "-n", "-3"}, "-n -3"},
		{[]string{"* * * * *", "-n", "10001"}, "-n 10001"},
		{[]string{"* * * * *", "-n", "x"}, "invalid value"},
		{[]string{"* * * * *", "-from", "yesterday"}, "-from:"},
		{[]string{"* * * * *", "-bogus"}, "flag provided but not defined"},
		{nil, "want one spec"},
		{[]string{"* * * * *", "@daily"}, "got 2 arguments"},
		{[]string{"*", "*", "*", "*", "*"}, "got 5 arguments"},
	}
	for _, c := range cases {
		var out, errs bytes.Buffer
		code := runCron(c.args, &out, &errs, time.Now())
		if code != 2 || out.Len() != 0 || !strings.Contains(errs.String(), c.want) {
			t.Errorf("runCron(%q) = %d, stdout %q, stderr %q; want 2 and %q", c.args, code, out.String(), errs.String(), c.want)
		}
	}
}

func TestCronHelp(t *testing.T) {
	t.Parallel()
	var out, errs bytes.Buffer
	if code := runCron([]string{"-h"}, &out, &errs, time.Now()); code != 0 || !strings.Contains(errs.String(), "usage: jobkit cron") {
		t.Errorf("runCron(-h) = %d, stderr %q", code, errs.String())
	}
}
