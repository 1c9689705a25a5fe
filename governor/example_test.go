package governor_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/jobkit/jobkit/governor"
)

func Example() {
	// A program leaves Config.Sampler unset to sample the machine and its
	// cgroup; this one pretends to run at 30% CPU in a 1GiB cgroup.
	sampler := governor.SamplerFunc(func(ctx context.Context) (governor.Reading, error) {
		return governor.Reading{
			CPUPercent: 30, CPUCores: 2, CPUSource: governor.SourceCgroupV2,
			MemoryUsed: 400 << 20, MemoryAvailable: 624 << 20, MemoryLimit: 1 << 30,
			MemorySource: governor.SourceCgroupV2,
		}, nil
	})
	g, err := governor.New(governor.Config{Slots: 2, Sampler: sampler})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	if err := g.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer g.Stop(ctx)

	// A scheduling loop asks before it takes work from the "emails" queue,
	// and releases the permit when the work is done.
	p, err := g.Acquire(ctx, "emails", governor.Weight{Memory: 64 << 20})
	if err != nil {
		log.Fatal(err)
	}
	s := g.Snapshot()
	fmt.Printf("admitting %v, slots %d/%d, memory %.0f%% (%v)\n",
		s.Admitting, s.SlotsInUse, s.Slots, s.MemoryPercent(), s.MemorySource)
	p.Release()

	// TryAcquire never blocks; here the weight does not fit the memory left
	// below the default limit of 90%.
	_, ok := g.TryAcquire("reports", governor.Weight{Memory: 600 << 20})
	fmt.Println("600MiB more admitted:", ok)
	fmt.Println("emails used slot-time:", g.Usage("emails") > 0)
	// Output:
	// admitting true, slots 1/2, memory 39% (cgroup v2)
	// 600MiB more admitted: false
	// emails used slot-time: true
}

func ExampleGovernor_Usage() {
	// A Governor that is never started has no reading and, under the default
	// StaleAdmit policy, admits on slots alone. A fake clock stands in for time.
	now := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	g, err := governor.New(governor.Config{Slots: 4, NowFunc: func() time.Time { return now }})
	if err != nil {
		log.Fatal(err)
	}
	emails, _ := g.TryAcquire("emails", governor.Weight{Slots: 2})
	reports, _ := g.TryAcquire("reports", governor.Weight{})
	now = now.Add(10 * time.Second)
	emails.Release()
	now = now.Add(20 * time.Second)

	// A scheduler serves the queue that has used the least.
	fmt.Println("emails:", g.Usage("emails"))
	fmt.Println("reports:", g.Usage("reports")) // still running: counted so far
	reports.Release()
	// Output:
	// emails: 20s
	// reports: 30s
}
