package governor_test

import (
	"context"
	"fmt"
	"log"

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
