package distinct_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/jobkit/jobkit/distinct"
)

// hostileCtx is a context whose Err panics or calls runtime.Goexit from its
// second call on: the one Work makes before its second batch.
type hostileCtx struct {
	context.Context
	calls  *int
	goexit bool
}

func (c hostileCtx) Err() error {
	if *c.calls++; *c.calls >= 2 {
		if c.goexit {
			runtime.Goexit()
		}
		panic("hostile Err")
	}
	return nil
}

// A context whose Err panics or calls runtime.Goexit when Work checks it
// before its next batch must not strand the batch Work has just processed:
// that batch succeeded and is completed, not left in progress for ever
// (where it would also keep Drain from returning).
func TestWorkSettlesItsBatchWhenCtxErrPanicsOrGoexits(t *testing.T) {
	t.Parallel()
	for _, goexit := range []bool{false, true} {
		q := newQueue[int](t, distinct.Config{})
		q.AddAll([]int{1, 2})
		calls := 0
		ctx := hostileCtx{context.Background(), &calls, goexit}
		var processed []int
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer func() { _ = recover() }()
			_ = q.Work(ctx, 1, func(_ context.Context, items []int) error {
				processed = append(processed, items...)
				return nil
			})
		}()
		<-done
		if len(processed) != 1 || processed[0] != 1 {
			t.Fatalf("goexit %v: Work processed %v, want [1]", goexit, processed)
		}
		if st := q.Stats(); st.InProgress != 0 || st.Completed != 1 || st.Queued != 1 {
			t.Errorf("goexit %v: Stats after Work's ctx.Err ended it = %+v; want 0 in progress, 1 completed, 1 queued", goexit, st)
		}
		if _, ok := q.Info(1); ok {
			t.Errorf("goexit %v: item 1, processed successfully, is still held", goexit)
		}
	}
}
