package core

import (
	"context"
	"testing"

	"github.com/jobkit/jobkit/scope"
)

// Done settles only items taken by Get: an item in progress under a Take's
// scope or a Process call is not Done's to settle (and a batch of Take may
// hold several, of which Done would settle the first whatever x was).
func TestDoneIgnoresItemsOfTakeAndProcess(t *testing.T) {
	var q Queue[int]
	q.Init(Config{})
	for i := range 4 {
		q.Add(i)
	}
	s := scope.New()
	items, err := q.Take(context.Background(), s, 2) // 0 1
	if err != nil || len(items) != 2 {
		t.Fatalf("Take = %v, %v", items, err)
	}
	for _, x := range items {
		if q.Done(x) {
			t.Errorf("Done(%d) of an item taken under a scope = true, want false", x)
		}
		if info, ok := q.Info(x); !ok || info.State != InProgress {
			t.Errorf("Info(%d) after Done = %+v, %v; want in progress", x, info, ok)
		}
	}
	err = q.Process(context.Background(), 1, func(_ context.Context, items []int) error {
		if q.Done(items[0]) {
			t.Errorf("Done(%d) of an item of Process = true, want false", items[0])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Close(scope.Succeeded())
	if st := q.Stats(); st.Completed != 3 || st.Queued != 1 || st.InProgress != 0 {
		t.Errorf("Stats = %+v; want 3 completed, 1 queued", st)
	}
}
