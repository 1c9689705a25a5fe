package sched_test

import (
	"context"
	"testing"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/scope"
)

// A group waits at the priority of its oldest pending entry (what a take's
// close queues it at again: pendingLevel). When that entry stops being
// pending (disabled, or deleted) the group's level must follow its new
// oldest pending entry: here y, of priority 3, is the group's only pending
// entry, and must be taken before z, of priority 2.
func TestGroupLevelFollowsItsOldestPendingEntry(t *testing.T) {
	for _, how := range []string{"disable", "delete"} {
		t.Run(how, func(t *testing.T) {
			ctx := context.Background()
			m := sched.NewMemory[string, string]()
			if err := m.Open(sched.QueueInfo{Name: "q", Grouped: true, Retention: sched.DefaultRetention}); err != nil {
				t.Fatal(err)
			}
			now := time.Now()
			add := func(k string, p int, g string) sched.ID {
				id, _, err := m.Add(ctx, sched.NewEntry[string, string]{Key: k, Priority: p, Group: g, Now: now})
				if err != nil {
					t.Fatal(err)
				}
				return id
			}
			x := add("x", 1, "g")
			add("y", 3, "g")
			add("z", 2, "")
			var err error
			if how == "disable" {
				err = m.SetDisabled(ctx, x, true)
			} else {
				_, err = m.Delete(ctx, sched.Filter[string, string]{After: x - 1, Until: x})
			}
			if err != nil {
				t.Fatal(err)
			}
			cs, err := m.Take(ctx, scope.New(), sched.TakeRequest{Now: now, Max: 4}, nil)
			if err != nil || len(cs) == 0 {
				t.Fatalf("Take = %v, %v", cs, err)
			}
			if cs[0].Key != "y" {
				t.Errorf("took %s (priority %d) first, want y (priority 3, its group's only pending entry)", cs[0].Key, cs[0].Priority)
			}
		})
	}
}
