package distinct_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/distinct"
	"github.com/jobkit/jobkit/scope"
)

func TestInfoTimesAndCounters(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		q := newQueue[string](t, distinct.Config{Timestamps: true})
		t0 := time.Now()
		q.Add("a")
		time.Sleep(time.Second) // fake time: advances the bubble's clock
		q.Add("b")
		q.Add("a") // a collision
		if _, ok := q.Info("zzz"); ok {
			t.Error("Info of an absent item reported true")
		}
		info, ok := q.Info("b")
		if !ok || info.State != distinct.Queued || !info.EnqueuedAt.Equal(t0.Add(time.Second)) {
			t.Errorf("Info(b) = %+v, %v", info, ok)
		}
		time.Sleep(time.Second)
		_, s := takeIn(t, q, 1) // a
		info, _ = q.Info("a")
		want := distinct.Info{
			State:      distinct.InProgress,
			EnqueuedAt: t0,
			TakenAt:    t0.Add(2 * time.Second),
			Collisions: 1,
		}
		if info != want {
			t.Errorf("Info(a) = %+v, want %+v", info, want)
		}
		s.Close(scope.Failed(nil))
		info, _ = q.Info("a")
		if info.State != distinct.Queued || !info.EnqueuedAt.Equal(t0) || info.Attempts != 1 || info.Collisions != 1 || !info.TakenAt.IsZero() {
			t.Errorf("Info(a) after failure = %+v", info)
		}
	})
}

func TestTimesAreZeroWithoutTimestamps(t *testing.T) {
	t.Parallel()
	q := newQueue[int](t, distinct.Config{})
	q.Add(1)
	q.Add(2)
	_, s := takeIn(t, q, 1)
	defer s.Close(scope.Succeeded())
	for x := range 2 {
		info, ok := q.Info(x + 1)
		if !ok || !info.EnqueuedAt.IsZero() || !info.TakenAt.IsZero() {
			t.Errorf("Info(%d) = %+v, %v; want zero times", x+1, info, ok)
		}
	}
}

func TestBlockedTakeIsWokenInTime(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		q := newQueue[int](t, distinct.Config{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start := time.Now()
		go func() {
			time.Sleep(10 * time.Second)
			q.Add(1)
		}()
		err := q.Process(ctx, 1, func(context.Context, []int) error { return nil })
		if err != nil || time.Since(start) != 10*time.Second {
			t.Fatalf("Process = %v after %v, want nil after 10s", err, time.Since(start))
		}
		_, err = q.Take(ctx, scope.New(), 1) // nothing comes: the deadline ends the wait
		if err != context.DeadlineExceeded || time.Since(start) != time.Minute {
			t.Fatalf("Take = %v after %v", err, time.Since(start))
		}
	})
}
