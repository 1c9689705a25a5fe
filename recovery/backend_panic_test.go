package recovery_test

import (
	"context"
	"errors"
	"iter"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/recovery"
	"github.com/jobkit/jobkit/sched"
)

// listPanics is Memory whose List panics.
type listPanics struct{ *sched.Memory[int, int] }

func (listPanics) List(context.Context, sched.Filter[int, int]) iter.Seq2[sched.Entry[int, int], error] {
	panic("backend List broke")
}

// lines keeps the messages of a Logger's records.
type lines struct {
	mu   sync.Mutex
	msgs []string
}

func (l *lines) handler() slog.Handler {
	return recordFunc(func(r slog.Record) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.msgs = append(l.msgs, r.Message)
	})
}

// count returns how many messages contain substr.
func (l *lines) count(substr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.msgs {
		if strings.Contains(m, substr) {
			n++
		}
	}
	return n
}

// A backend whose List panics does not take the reaper's goroutine, and
// with it the process, down: each look logs the panic and the reaper goes
// on looking.
func TestABackendPanicInALookIsLogged(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, err := sched.New(sched.Config{Workers: 1, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sched.NewQueue(s, "q", sched.QueueConfig[int, int]{
			Handler: func(context.Context, *sched.Job[int, int]) error { return nil },
			Backend: listPanics{sched.NewMemory[int, int]()},
		}); err != nil {
			t.Fatal(err)
		}
		log := &lines{}
		r, err := recovery.New(s, recovery.Config{Interval: time.Second, StallThreshold: -1, Logger: slog.New(log.handler())})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if err := r.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3*time.Second + time.Millisecond) // three looks
		synctest.Wait()
		if n := log.count("panicked"); n != 3 {
			t.Errorf("%d looks logged the backend's panic, want 3", n)
		}
		if err := r.Stop(ctx); err != nil {
			t.Error(err)
		}
		if err := s.Stop(ctx); err != nil {
			t.Error(err)
		}
	})
}

// panicsOnce is Memory whose List panics once, after the entries it lists.
type panicsOnce struct {
	*sched.Memory[int, int]
	armed *bool
}

func (b panicsOnce) List(ctx context.Context, f sched.Filter[int, int]) iter.Seq2[sched.Entry[int, int], error] {
	return func(yield func(sched.Entry[int, int], error) bool) {
		for e, err := range b.Memory.List(ctx, f) {
			if !yield(e, err) {
				return
			}
		}
		if *b.armed {
			*b.armed = false
			panic("backend List broke after its entries")
		}
	}
}

// A look whose backend panics after listing a run taken too often raises
// no alert for it, and the next look does: the alert is not left marked
// raised by the look that ended.
func TestABackendPanicLosesNoAlert(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, err := sched.New(sched.Config{Workers: 1, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		armed := true
		finish := make(chan struct{})
		q, err := sched.NewQueue(s, "q", sched.QueueConfig[int, int]{
			Retry:   &sched.RetryPolicy{MaxRetries: 1, Base: time.Nanosecond},
			Backend: panicsOnce{sched.NewMemory[int, int](), &armed},
			Handler: func(ctx context.Context, j *sched.Job[int, int]) error {
				if j.Attempt == 1 {
					return errors.New("again")
				}
				<-finish // the second run goes on: taken twice
				return nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		var alerts int
		r, err := recovery.New(s, recovery.Config{
			Interval: time.Hour, TakenThreshold: 1, StallThreshold: -1, Logger: quiet,
			OnAlert: func(a recovery.Alert) {
				if a.Kind == recovery.TakenTooOften {
					alerts++
				}
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if _, _, err := q.Add(ctx, 1); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second) // its retry comes due
		synctest.Wait()         // and its second run is in progress
		r.Look(ctx)             // the backend panics after listing it
		if alerts != 0 {
			t.Fatalf("%d alerts from the look whose backend panicked, want 0", alerts)
		}
		r.Look(ctx)
		if alerts != 1 {
			t.Errorf("%d alerts from the next look, want 1", alerts)
		}
		close(finish)
		if err := s.Stop(ctx); err != nil {
			t.Error(err)
		}
	})
}
