package recovery_test

import (
	"context"
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
