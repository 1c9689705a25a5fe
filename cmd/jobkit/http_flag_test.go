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
// a child process that TestBadHTTPFailsFast starts.
func TestMainHelper(t *testing.T) {
	args := os.Getenv("JOBKIT_MAIN_ARGS")
	if args == "" {
		t.Skip("run by TestBadHTTPFailsFast")
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
