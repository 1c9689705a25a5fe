package governor

import "testing"

// BenchmarkGovernor_Take measures the slot counter alone, from every P at
// once: the admission decision and taking and returning one slot, without
// the Permit that makes Release idempotent. Compare with
// BenchmarkGovernor_TryAcquire/impl=governor/key=none.
func BenchmarkGovernor_Take(b *testing.B) {
	g, err := New(Config{Slots: 1 << 20, Sampler: SamplerFunc(nil)})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if !g.take(cost{slots: 1}) {
				b.Error("take failed")
				return
			}
			g.putSlots(1)
		}
	})
}
