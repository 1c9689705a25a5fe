package sched_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/internal/must"
)

type order struct {
	Customer string
	Total    int
}

// newInspected returns a scheduler (not started) with two queues of other
// types: "orders" with 50 entries keyed by "customer/n" and "ids" with 30
// int entries, a third of them delayed.
func newInspected(t *testing.T) (*sched.Scheduler, *sched.Queue[order, string], *sched.Queue[int, int]) {
	t.Helper()
	s, err := sched.New(sched.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(context.Background()) })
	orders := must.Queue(t, s, "orders", sched.QueueConfig[order, string]{
		Handler: nop[order, string],
		Key:     func(o order) string { return fmt.Sprintf("%s/%d", o.Customer, o.Total) },
	})
	ids := must.Queue(t, s, "ids", sched.QueueConfig[int, int]{Handler: nop[int, int]})
	for i := range 50 {
		must.Add(t, orders, order{Customer: []string{"acme", "globex"}[i%2], Total: i})
	}
	for i := range 30 {
		var opts []sched.AddOption
		if i%3 == 0 {
			opts = append(opts, sched.After(time.Hour))
		}
		must.Add(t, ids, i, opts...)
	}
	return s, orders, ids
}

func listAll(t *testing.T, in *sched.Inspector, q sched.Query) []sched.Summary {
	t.Helper()
	var out []sched.Summary
	for e, err := range in.List(context.Background(), q) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func TestInspectorListsAndCounts(t *testing.T) {
	t.Parallel()
	s, _, _ := newInspected(t)
	in := s.Inspector()
	ctx := context.Background()
	all := listAll(t, in, sched.Query{})
	if len(all) != 80 || all[0].Queue != "ids" || all[79].Queue != "orders" {
		t.Fatalf("listed %d entries from %s to %s, want 80, ids first", len(all), all[0].Queue, all[79].Queue)
	}
	if !slices.IsSortedFunc(all, func(a, b sched.Summary) int {
		if c := strings.Compare(a.Queue, b.Queue); c != 0 {
			return c
		}
		return int(a.ID) - int(b.ID)
	}) {
		t.Error("not listed by queue, then ID")
	}
	for _, e := range all {
		if e.Payload != nil {
			t.Fatal("a payload without Payloads")
		}
	}
	for name, tc := range map[string]struct {
		q    sched.Query
		want int
	}{
		"everything":       {sched.Query{}, 80},
		"one queue":        {sched.Query{Queues: []string{"orders"}}, 50},
		"delayed":          {sched.Query{States: []sched.State{sched.StateDelayed}}, 10},
		"pending of ids":   {sched.Query{Queues: []string{"ids"}, States: []sched.State{sched.StatePending}}, 20},
		"repeated states":  {sched.Query{States: []sched.State{sched.StatePending, sched.StatePending}}, 70},
		"key prefix":       {sched.Query{KeyPrefix: "acme/"}, 25},
		"int key prefix":   {sched.Query{Queues: []string{"ids"}, KeyPrefix: "2"}, 11}, // 2, 20..29
		"match on payload": {sched.Query{Payloads: true, Match: func(s *sched.Summary) bool { o, ok := s.Payload.(order); return ok && o.Total >= 40 }}, 10},
		"after a cursor":   {sched.Query{After: all[9].Cursor()}, 70},
	} {
		if got := len(listAll(t, in, tc.q)); got != tc.want {
			t.Errorf("%s: listed %d, want %d", name, got, tc.want)
		}
		if got, err := in.Count(ctx, tc.q); err != nil || got != tc.want {
			t.Errorf("%s: Count = %d, %v; want %d", name, got, err, tc.want)
		}
	}
	if _, err := in.Count(ctx, sched.Query{Queues: []string{"nope"}}); !errors.Is(err, sched.ErrUnknownQueue) {
		t.Errorf("Count of an unknown queue = %v", err)
	}
	e, err := in.Get(ctx, "orders", all[30].ID)
	if o, ok := e.Payload.(order); err != nil || !ok || e.Key != fmt.Sprintf("%s/%d", o.Customer, o.Total) {
		t.Errorf("Get = %+v, %v", e, err)
	}
	if _, err := in.Get(ctx, "orders", 1<<40); !errors.Is(err, sched.ErrNotFound) {
		t.Errorf("Get of an unknown ID = %v", err)
	}
	for _, bad := range []string{"x", "/3", "q/x", "q/-1"} {
		if _, err := sched.ParseCursor(bad); !errors.Is(err, sched.ErrInvalid) {
			t.Errorf("ParseCursor(%q) = %v", bad, err)
		}
	}
	if c, err := sched.ParseCursor(all[5].Cursor().String()); err != nil || c != all[5].Cursor() {
		t.Errorf("cursor round trip: %v, %v", c, err)
	}
}

// Paging with a cursor while entries are added and deleted between pages
// sees every entry that stayed, once, in order.
func TestInspectorPagesWhileQueuesChange(t *testing.T) {
	t.Parallel()
	s, orders, ids := newInspected(t)
	in := s.Inspector()
	ctx := context.Background()
	seen := map[sched.Cursor]bool{}
	var order []sched.Cursor
	var after sched.Cursor
	for page := 0; ; page++ {
		n := 0
		for e, err := range in.List(ctx, sched.Query{After: after}) {
			if err != nil {
				t.Fatal(err)
			}
			if seen[e.Cursor()] {
				t.Fatalf("%v listed twice", e.Cursor())
			}
			seen[e.Cursor()] = true
			order = append(order, e.Cursor())
			after = e.Cursor()
			if n++; n == 7 {
				break
			}
		}
		if n == 0 {
			break
		}
		if page < 10 {
			// Between pages: add to both queues, behind and ahead of the
			// cursor, and delete an entry not seen yet.
			must.Add(t, ids, 1000+page)
			must.Add(t, orders, order2(page))
			if _, err := in.Delete(ctx, sched.Query{Queues: []string{"ids"}, KeyPrefix: fmt.Sprint(29 - page)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, e := range listAll(t, in, sched.Query{}) {
		original := (e.Queue == "ids" && e.ID <= 30) || (e.Queue == "orders" && e.ID <= 50)
		if !seen[e.Cursor()] && original {
			t.Errorf("%v stayed but was never listed", e.Cursor())
		}
	}
	if !slices.IsSortedFunc(order, func(a, b sched.Cursor) int {
		if c := strings.Compare(a.Queue, b.Queue); c != 0 {
			return c
		}
		return int(a.ID) - int(b.ID)
	}) {
		t.Error("pages not in order")
	}
}

func order2(i int) order { return order{Customer: "late", Total: i} }

func TestInspectorWrites(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := newScheduler(t, sched.Config{Workers: 2})
		in := s.Inspector()
		q := must.Queue(t, s, "q", sched.QueueConfig[int, int]{
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				if j.Payload < 5 {
					return sched.Permanent(errors.New("bad"))
				}
				return nil
			},
			Retention: &sched.Retention{Succeeded: time.Hour, MaxSucceeded: 100, Failed: time.Hour, MaxFailed: 100},
		})
		for i := range 10 {
			must.Add(t, q, i)
		}
		synctest.Wait()
		failed := sched.Query{States: []sched.State{sched.StateFailed}}
		if n, _ := in.Count(ctx, failed); n != 5 {
			t.Fatalf("%d failed, want 5", n)
		}
		// Retry keeping the attempts: they fail again, with 2 attempts.
		if n, err := in.Retry(ctx, failed, false); n != 5 || err != nil {
			t.Fatalf("Retry = %d, %v", n, err)
		}
		synctest.Wait()
		for _, e := range listAll(t, in, failed) {
			if e.Attempts != 2 {
				t.Errorf("entry %d: %d attempts after a retry that kept them", e.ID, e.Attempts)
			}
		}
		// Retry one, resetting: one attempt.
		first := listAll(t, in, failed)[0]
		if err := in.RetryID(ctx, "q", first.ID, true); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if e, _ := in.Get(ctx, "q", first.ID); e.Attempts != 1 {
			t.Errorf("after a reset: %d attempts", e.Attempts)
		}
		if err := in.RetryID(ctx, "q", 1<<40, true); !errors.Is(err, sched.ErrNotFound) {
			t.Errorf("RetryID of an unknown ID = %v", err)
		}
		// Delete the error queue.
		if n, err := in.Delete(ctx, failed); n != 5 || err != nil {
			t.Errorf("Delete = %d, %v", n, err)
		}
		// Pause: nothing more runs; disable; resume.
		if err := in.Pause("q"); err != nil {
			t.Fatal(err)
		}
		a, b := must.Add(t, q, 100), must.Add(t, q, 101)
		if err := in.Disable(ctx, "q", a); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if c := must.Counts(t, q); c.Pending != 2 {
			t.Fatalf("paused queue: %+v", c)
		}
		if err := in.Resume("q"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if e, _ := in.Get(ctx, "q", a); e.State != sched.StatePending || !e.Disabled {
			t.Errorf("disabled entry: %+v", e)
		}
		if e, _ := in.Get(ctx, "q", b); e.State != sched.StateSucceeded {
			t.Errorf("enabled entry: %v", e.State)
		}
		if err := in.Enable(ctx, "q", a); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if e, _ := in.Get(ctx, "q", a); e.State != sched.StateSucceeded {
			t.Errorf("entry enabled again: %v", e.State)
		}
		for _, err := range []error{in.Pause("x"), in.Resume("x"), in.Disable(ctx, "x", 1), in.RetryID(ctx, "x", 1, false)} {
			if !errors.Is(err, sched.ErrUnknownQueue) {
				t.Errorf("a write to an unknown queue = %v", err)
			}
		}
		sums, err := in.Summaries(ctx)
		if err != nil || len(sums) != 1 || sums[0].Succeeded != 7 || sums[0].Failed != 11 {
			t.Errorf("Summaries = %+v, %v; want 7 succeeded and 11 failed runs (5, 5 retried, 1 retried by ID) in the last minute", sums, err)
		}
		time.Sleep(2 * time.Minute)
		if sums, _ := in.Summaries(ctx); sums[0].Succeeded != 0 {
			t.Errorf("a minute later the window still counts %d", sums[0].Succeeded)
		}
	})
}

// Listing 1,000,000 retained entries allocates a constant number of times
// per listed entry and no buffer proportional to their number.
func TestListingStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("lists a million entries")
	}
	ctx := context.Background()
	s, err := sched.New(sched.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop(ctx)
	q := must.Queue(t, s, "big", sched.QueueConfig[int, int]{Handler: nop[int, int]})
	const n = 1_000_000
	for i := range n {
		if _, _, err := q.Add(ctx, i, sched.After(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	in := s.Inspector()
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	listed, peak := 0, uint64(0)
	for _, err := range in.List(ctx, sched.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		if listed++; listed%100_000 == 0 {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
		}
	}
	runtime.ReadMemStats(&m1)
	perItem := float64(m1.Mallocs-m0.Mallocs) / n
	t.Logf("listed %d: %.2f allocations and %.0f bytes per entry; heap in use %d MB before, peak %d MB",
		listed, perItem, float64(m1.TotalAlloc-m0.TotalAlloc)/n, m0.HeapInuse>>20, peak>>20)
	if listed != n || perItem > 3 || peak > m0.HeapInuse+64<<20 {
		t.Errorf("listed %d, %.2f allocations per entry, heap from %d to %d MB: want %d, O(1), no growth with N", listed, perItem, m0.HeapInuse>>20, peak>>20, n)
	}
}
