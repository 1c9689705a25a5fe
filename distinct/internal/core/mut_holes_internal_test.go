package core

import (
	"context"
	"testing"

	"github.com/jobkit/jobkit/scope"
)

// A hole Remove left in fresh is forgotten once a take skips over it: the
// holes map holds only positions still in the ring, so a long queue with
// occasional removes does not grow it without bound.
func TestSkippedHolesAreForgotten(t *testing.T) {
	var q Queue[int]
	q.Init(Config{})
	for i := range 10 {
		q.Add(i)
	}
	for _, x := range []int{2, 5} {
		if !q.Remove(x) {
			t.Fatalf("Remove(%d) = false", x)
		}
	}
	if len(q.holes) != 2 {
		t.Fatalf("%d holes after two removes, want 2", len(q.holes))
	}
	s := scope.New()
	items, err := q.Take(context.Background(), s, 4) // 0 1 3 4: skips the hole at 2
	if err != nil || len(items) != 4 || items[2] != 3 {
		t.Fatalf("Take = %v, %v", items, err)
	}
	if len(q.holes) != 1 {
		t.Errorf("%d holes after a take skipped one of two, want 1", len(q.holes))
	}
	items, err = q.Take(context.Background(), s, 10) // 6..9: skips the hole at 5
	if err != nil || len(items) != 4 || items[0] != 6 {
		t.Fatalf("Take = %v, %v", items, err)
	}
	if len(q.holes) != 0 {
		t.Errorf("%d holes once every hole was skipped, want 0", len(q.holes))
	}
	s.Close(scope.Succeeded())
}
