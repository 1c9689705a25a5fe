package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestDemoCompletesEveryJobOnce(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	cfg := demoConfig{Jobs: 30, Producers: 3, Workers: 4, Batch: 3, FlakyEvery: 5}
	if err := runDemo(context.Background(), &out, cfg); err != nil {
		t.Fatalf("runDemo: %v\n%s", err, out.String())
	}
	got := out.String()
	if !strings.Contains(got, "submitted: 30 jobs, 60 submissions rejected as duplicates") ||
		!strings.Contains(got, "finished: 30 jobs completed exactly once; 6 failures put ") {
		t.Errorf("summary missing or wrong:\n%s", got)
	}
	if n := len(regexp.MustCompile(`job-\d+ failed \(transient failure\)`).FindAllString(got, -1)); n != 6 {
		t.Errorf("%d failures reported, want 6:\n%s", n, got)
	}
}

func TestDemoRejectsBadConfig(t *testing.T) {
	t.Parallel()
	ok := demoConfig{Jobs: 1, Producers: 1, Workers: 1, Batch: 1}
	for name, bad := range map[string]func(*demoConfig){
		"zero jobs":           func(c *demoConfig) { c.Jobs = 0 },
		"100 billion jobs":    func(c *demoConfig) { c.Jobs = 99_999_999_999 },
		"a million workers":   func(c *demoConfig) { c.Workers = 1 << 20 },
		"a day of work a job": func(c *demoConfig) { c.Work = 24 * time.Hour },
	} {
		c := ok
		bad(&c)
		if err := runDemo(context.Background(), &bytes.Buffer{}, c); err == nil {
			t.Errorf("runDemo accepted %s", name)
		}
	}
}

func TestDemoStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// Jobs that would take an hour: the demo must stop at once, not finish.
	err := runDemo(ctx, &bytes.Buffer{}, demoConfig{Jobs: 5, Producers: 1, Workers: 2, Batch: 1, Work: time.Hour})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("runDemo with a cancelled context = %v, want context.Canceled", err)
	}
}

// With one producer and one worker the demo is deterministic.
func Example() {
	cfg := demoConfig{Jobs: 6, Producers: 1, Workers: 1, Batch: 4, FlakyEvery: 3}
	var out bytes.Buffer
	if err := runDemo(context.Background(), &out, cfg); err != nil {
		panic(err)
	}
	s := out.String()
	fmt.Println(s[:strings.LastIndex(s, ";")]) // without the elapsed time
	// Output:
	// submitted: 6 jobs, 0 submissions rejected as duplicates
	// worker 0: took [job-00 job-01 job-02 job-03]
	// worker 0: job-02 failed (transient failure): [job-02 job-03] back in place; queue now [job-02 job-03 job-04 job-05]
	// worker 0: took [job-02 job-03 job-04 job-05]
	// worker 0: job-05 failed (transient failure): [job-05] back in place; queue now [job-05]
	// worker 0: took [job-05]
	// finished: 6 jobs completed exactly once; 2 failures put 3 jobs back in place
}
