package sched_test

import (
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/sched"
)

// A Reap before anything was added leaves the queue's later times alone.
// Memory fixes its epoch (the instant its int64 nanoseconds count from) at
// the first instant it converts, and Inspector.Reap hands the backend's
// Expired now − grace. Before, on a queue nothing was added to yet, a
// grace of math.MaxInt64 or a zero now put the epoch centuries back, and
// every later instant of the queue saturated: an entry added After an hour
// ran at once, and its times read wrong.
func TestAReapBeforeAnyAddLeavesLaterTimesAlone(t *testing.T) {
	for name, reap := range map[string]func(*sched.Inspector, time.Time) error{
		"grace MaxInt64": func(in *sched.Inspector, now time.Time) error {
			_, err := in.Reap(context.Background(), now, math.MaxInt64)
			return err
		},
		"zero now": func(in *sched.Inspector, now time.Time) error {
			_, err := in.Reap(context.Background(), time.Time{}, 0)
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				s := newScheduler(t, sched.Config{Workers: 1, Logger: quiet})
				ran := make(chan int, 2)
				q, err := sched.NewQueue(s, "q", sched.QueueConfig[int, int]{
					Handler: func(_ context.Context, j *sched.Job[int, int]) error { ran <- j.Payload; return nil },
				})
				if err != nil {
					t.Fatal(err)
				}
				now := s.Clock().Now()
				if err := reap(s.Inspector(), now); err != nil {
					t.Fatal(err)
				}
				id, _, err := q.Add(ctx, 1, sched.After(time.Hour))
				if err != nil {
					t.Fatal(err)
				}
				e, _ := q.Get(ctx, id)
				if !e.EnqueuedAt.Equal(now) || !e.RunAt.Equal(now.Add(time.Hour)) {
					t.Errorf("added at %v after an hour: enqueued %v, runs at %v", now, e.EnqueuedAt, e.RunAt)
				}
				if _, _, err := q.Add(ctx, 2); err != nil { // a take: promotes what is due
					t.Fatal(err)
				}
				if v := <-ran; v != 2 {
					t.Errorf("ran %d first", v)
				}
				select {
				case <-ran:
					t.Errorf("an entry added After(time.Hour) ran after %v", time.Since(now))
				case <-time.After(30 * time.Minute):
				}
				select {
				case <-ran: // at its time
				case <-time.After(10 * time.Second):
				}
			})
		})
	}
}
