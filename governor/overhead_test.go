//go:build linux

package governor_test

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/jobkit/jobkit/governor"
)

// TestSystemSamplerOverhead measures the CPU the sampling goroutine costs at
// the default interval. It runs only when GOVERNOR_OVERHEAD is set to how long
// each phase lasts, for example:
//
//	GOVERNOR_OVERHEAD=20s go test -run=TestSystemSamplerOverhead -count=5 -v ./governor/
//
// It compares the process CPU time (getrusage) of an idle phase with that of a
// phase running a default Governor, and also times back-to-back samples.
func TestSystemSamplerOverhead(t *testing.T) {
	t.Parallel()
	d, err := time.ParseDuration(os.Getenv("GOVERNOR_OVERHEAD"))
	if err != nil {
		t.Skip("set GOVERNOR_OVERHEAD to a duration, such as 20s, to measure the sampler's overhead")
	}

	idle := cpuTime(t, func() { time.Sleep(d) })

	g, err := governor.New(governor.Config{}) // the SystemSampler, sampling every second
	if err != nil {
		t.Fatal(err)
	}
	sampling := cpuTime(t, func() {
		if err := g.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(d)
		if err := g.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	})

	const n = 1000
	var s governor.SystemSampler
	burst := cpuTime(t, func() {
		for range n {
			if _, err := s.Sample(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	})

	overhead := float64(sampling-idle) / float64(d) * 100
	perSample := burst / n
	t.Logf("phase %v: idle %v CPU, sampling %v CPU: overhead %.4f%% of one core", d, idle, sampling, overhead)
	t.Logf("back to back: %v CPU per sample: %.4f%% of one core at one sample a second", perSample, float64(perSample)/float64(time.Second)*100)
	t.Logf("snapshot: %v", g.Snapshot())
}

// cpuTime returns the user and system CPU time the process spends during f.
func cpuTime(t *testing.T, f func()) time.Duration {
	t.Helper()
	before := rusage(t)
	f()
	return rusage(t) - before
}

func rusage(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
