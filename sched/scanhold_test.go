package sched_test

import (
	"context"
	"testing"
	"time"

	"github.com/jobkit/jobkit/sched"
)

// A filtered listing lets go of the queue's lock every so many entries it
// looks at, not only every so many it copies: a listing of the pending
// entries of a queue that also holds many delayed ones (GET
// /entries?state=pending, or GET /queues, which looks for each queue's
// oldest pending entry) held the lock across every entry of the queue at
// once, stalling its adds, takes and settles (65 ms for 2 million), however
// short the page. The proof here needs no clock: entry 1 is pending, 5,000
// delayed ones follow, and once entry 1 is yielded (outside the lock) a
// pending entry is added at the end. The listing finds it only if it went
// on looking in another hold of the lock than the one that copied entry 1;
// it used to have looked at all 5,001 in that one hold, and ended.
func TestAFilteredListingLetsGoOfTheLockWhileItLooks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := sched.NewMemory[int, int]()
	if err := m.Open(sched.QueueInfo{Name: "q", Notify: func() {}, Retention: sched.DefaultRetention}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	add := func(key int, runAt time.Time) {
		t.Helper()
		if _, ok, err := m.Add(ctx, sched.NewEntry[int, int]{Key: key, Payload: key, Priority: 1, Now: now, RunAt: runAt}); err != nil || !ok {
			t.Fatalf("Add(%d) = %v, %v", key, ok, err)
		}
	}
	add(0, time.Time{})
	for i := 1; i <= 5000; i++ {
		add(i, now.Add(time.Hour))
	}
	var seen []int
	f := sched.Filter[int, int]{States: []sched.State{sched.StatePending}}
	f.Key = func(k int) bool {
		if k == 0 {
			add(-1, time.Time{}) // outside the lock: Key runs outside it
		}
		return true
	}
	for e, err := range m.List(ctx, f) {
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, e.Key)
	}
	if len(seen) != 2 {
		t.Fatalf("listed %v: the pending entry added once entry 1 was yielded, 5,000 entries before the listing reached it, was not seen: the listing looked at every entry of the queue in one hold of its lock", seen)
	}
}
