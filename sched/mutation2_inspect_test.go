package sched_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// Inspector.Delete with a cursor acts on what follows the cursor: the
// entries of the cursor's queue after its ID, and every entry of the
// queues after it; the entries up to the cursor, and the queues before it,
// are left alone. (From mutation testing: Inspector.each skipping the
// cursor's own queue survived every test.)
func TestDeleteAfterACursorDeletesTheRestOfItsQueue(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
		var qs []*sched.Queue[int, int]
		for _, name := range []string{"a", "b", "c"} {
			q := must.Queue(t, s, name, sched.QueueConfig[int, int]{Handler: nop[int, int]})
			q.Pause() // the entries stay pending
			for k := 1; k <= 3; k++ {
				must.Add(t, q, k)
			}
			qs = append(qs, q)
		}
		n, err := s.Inspector().Delete(ctx, sched.Query{After: sched.Cursor{Queue: "b", ID: 1}})
		if err != nil || n != 5 {
			t.Errorf("Delete after b/1 = %d, %v; want 5: b/2, b/3 and the 3 of c", n, err)
		}
		for i, want := range []int{3, 1, 0} {
			if c := must.Counts(t, qs[i]); c.Pending != want {
				t.Errorf("queue %d: %d pending, want %d", i, c.Pending, want)
			}
		}
	})
}
