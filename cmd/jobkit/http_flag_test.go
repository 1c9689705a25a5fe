package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestMainHelper runs main with the flags in JOBKIT_MAIN_ARGS, in
// a child process that TestBadHTTPFailsFast and TestBadFlagsExitTwo start.
func TestMainHelper(t *testing.T) {
	args := os.Getenv("JOBKIT_MAIN_ARGS")
	if args == "" {
		t.Skip("run by TestBadHTTPFailsFast and TestBadFlagsExitTwo")
	}
	os.Args = append([]string{"jobkit"}, strings.Fields(args)...)
	main()
}

// An -http address that cannot be listened on is a bad flag: jobkit says
// so and exits non-zero at once, before the first part runs. (It found out
// only once the whole first part had run, which the other flags may make as
// long as they like: here -work 1h, hours.) The 20 s deadline only bounds a
// failure.
func TestBadHTTPFailsFast(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestMainHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "JOBKIT_MAIN_ARGS=-http 127.0.0.1:99999 -jobs 2 -workers 1 -work 1h")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("jobkit -http 127.0.0.1:99999 -work 1h still ran after 20s instead of refusing the address; output:\n%s", out)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 || !strings.Contains(string(out), "99999") {
		t.Fatalf("exit %v, output:\n%s\nwant a non-zero exit naming the address", err, out)
	}
	if strings.Contains(string(out), "submitted:") {
		t.Errorf("the first part ran before the bad address was refused:\n%s", out)
	}
}

// jobkit -h exits 0 and its usage names the cron subcommand, which the
// flags alone did not show.
func TestUsageNamesCron(t *testing.T) {
	t.Parallel()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestMainHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "JOBKIT_MAIN_ARGS=-h")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), `jobkit cron "<spec>"`) {
		t.Errorf("jobkit -h: %v, output:\n%s\nwant exit 0 and a usage that names the cron subcommand", err, out)
	}
}

// A flag value out of range is a usage error, as one that does not parse
// is: jobkit names the flag and exits 2 at once, before the first part
// starts (and before -http listens). Before, the demo's own checks ran
// only once the first part began: jobkit printed its first heading, then
// "invalid configuration {Jobs:-1 Producers:2 …}: counts must be
// positive" (for -work -1s too), and exited 1; a bad -http address
// exited 1 as well.
func TestBadFlagsExitTwo(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ args, says string }{
		{"-jobs -1", "-jobs -1"},
		{"-jobs 0", "-jobs 0"},
		{"-jobs 1000001", "-jobs 1000001"},
		{"-producers 0", "-producers 0"},
		{"-workers 4097", "-workers 4097"},
		{"-batch -3", "-batch -3"},
		{"-flaky -1", "-flaky -1"},
		{"-work -1s", "-work -1s"},
		{"-work 2h", "-work 2h"},
		{"-http 127.0.0.1:99999", "99999"},
		{"-http 127.0.0.1:0 -jobs -1", "-jobs -1"},
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestMainHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), "JOBKIT_MAIN_ARGS="+c.args)
		out, err := cmd.CombinedOutput()
		cancel()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), c.says) {
			t.Errorf("jobkit %s: exit %v, output:\n%s\nwant exit status 2 and a message naming %q", c.args, err, out, c.says)
			continue
		}
		if strings.Contains(string(out), "== distinct") {
			t.Errorf("jobkit %s: the first part began before the flag was refused:\n%s", c.args, out)
		}
	}
}
