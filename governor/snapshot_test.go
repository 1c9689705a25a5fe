package governor_test

import (
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/governor"
)

func TestSnapshotString(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := governor.Reading{
			CPUPercent: 91.25, CPUCores: 1.5, CPUSource: governor.SourceCgroupV2,
			MemoryUsed: 1536 << 20, MemoryAvailable: 512 << 20, MemoryLimit: 2 << 30,
			MemorySource: governor.SourceCgroupV1, GoHeap: 1010 << 10, GoMemLimit: 1 << 30,
		}
		g, f := setup(t, governor.Config{Slots: 8}, r)
		p, _ := g.TryAcquire("", governor.Weight{})
		defer p.Release()
		time.Sleep(interval / 2)
		want := "refusing (cpu over); cpu 91.2% of 1.5 cores (cgroup v2); " +
			"memory 1.5GiB used, 512MiB available of 2GiB (cgroup v1); go heap 1010KiB, GOMEMLIMIT 1GiB; " +
			"slots 0/8, 0 waiting; sampled 500ms ago"
		if got := g.Snapshot().String(); got != want {
			t.Errorf("String() =\n %s\nwant\n %s", got, want)
		}
		sample(f, governor.Reading{}, errors.New("no /proc"))
		if got := g.Snapshot().String(); !strings.HasPrefix(got, "admitting;") || !strings.HasSuffix(got, "sampled 1.5s ago; stale: no /proc") {
			t.Errorf("String() of a stale snapshot = %s", got)
		}
	})
	g, err := governor.New(governor.Config{Sampler: &fakeSampler{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Snapshot().String(); !strings.Contains(got, "(unknown); go heap 0B, GOMEMLIMIT none") || !strings.HasSuffix(got, "no sample yet; stale") {
		t.Errorf("String() before Start = %s", got)
	}
}
