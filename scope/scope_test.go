package scope_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jobkit/jobkit/scope"
)

// record returns a finalizer that appends name and the exit's kind to log.
func record(log *[]string, name string) func(scope.Exit) error {
	return func(e scope.Exit) error {
		*log = append(*log, name+":"+e.Kind().String())
		return nil
	}
}

func TestCloseRunsFinalizersLIFOWithExit(t *testing.T) {
	t.Parallel()
	for _, exit := range []scope.Exit{
		scope.Succeeded(),
		scope.Failed(errors.New("boom")),
		scope.Panicked(&scope.PanicError{Value: 1}),
		scope.Interrupted(context.Canceled),
	} {
		var log []string
		s := scope.New()
		for _, name := range []string{"a", "b", "c"} {
			if err := s.Defer(record(&log, name)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(exit); err != nil {
			t.Fatalf("Close: %v", err)
		}
		k := exit.Kind().String()
		want := []string{"c:" + k, "b:" + k, "a:" + k}
		if !slices.Equal(log, want) {
			t.Errorf("exit %v: ran %v, want %v", exit, log, want)
		}
	}
}

func TestCloseRunsAllEvenWhenSomeFailOrPanic(t *testing.T) {
	t.Parallel()
	errA := errors.New("a failed")
	var ran []string
	var s scope.Scope // the zero value is usable
	s.Defer(func(scope.Exit) error { ran = append(ran, "a"); return errA })
	s.Defer(func(scope.Exit) error { ran = append(ran, "b"); panic("b panicked") })
	s.Defer(func(scope.Exit) error { ran = append(ran, "c"); return nil })

	err := s.Close(scope.Succeeded())
	if !slices.Equal(ran, []string{"c", "b", "a"}) {
		t.Fatalf("ran %v, want [c b a]", ran)
	}
	if !errors.Is(err, errA) {
		t.Errorf("Close error %v does not wrap the finalizer's error", err)
	}
	var p *scope.PanicError
	if !errors.As(err, &p) || p.Value != "b panicked" {
		t.Fatalf("Close error %v does not carry the finalizer's panic", err)
	}
	if !strings.Contains(string(p.Stack), "scope_test.go") {
		t.Errorf("panic stack does not point at the finalizer:\n%s", p.Stack)
	}
}

func TestCloseIsIdempotentAndFirstExitWins(t *testing.T) {
	t.Parallel()
	var log []string
	s := scope.New()
	s.Defer(record(&log, "f"))
	if err := s.Close(scope.Failed(errors.New("x"))); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(scope.Succeeded()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if !slices.Equal(log, []string{"f:failure"}) {
		t.Errorf("ran %v, want one run seeing the first exit", log)
	}
	if !s.Closed() {
		t.Error("Closed() = false after Close")
	}
}

func TestConcurrentCloseWaitsForFinalizers(t *testing.T) {
	t.Parallel()
	s := scope.New()
	started := make(chan struct{})
	release := make(chan struct{})
	var done bool
	s.Defer(func(scope.Exit) error {
		close(started)
		<-release
		done = true
		return nil
	})
	first := make(chan error)
	go func() { first <- s.Close(scope.Succeeded()) }()
	<-started
	second := make(chan error)
	go func() { second <- s.Close(scope.Succeeded()) }()
	close(release)
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if !done { // read after the second Close returned: it must see the write
		t.Error("second Close returned before the finalizer finished")
	}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
}

func TestAddToClosedScopeRunsAtOnce(t *testing.T) {
	t.Parallel()
	s := scope.New()
	boom := errors.New("boom")
	s.Close(scope.Failed(boom))

	var got scope.Exit
	err := s.Defer(func(e scope.Exit) error { got = e; return errors.New("late") })
	if err == nil || err.Error() != "late" {
		t.Errorf("Defer on closed scope returned %v, want the finalizer's error", err)
	}
	if !errors.Is(got.Err(), boom) {
		t.Errorf("late finalizer saw %v, want the scope's exit", got)
	}
	if s.TryAdd(scope.FinalizerFunc(func(scope.Exit) error { t.Error("TryAdd ran f"); return nil })) {
		t.Error("TryAdd on closed scope reported true")
	}
}

func TestFinalizerAddedWhileClosingRunsAtOnce(t *testing.T) {
	t.Parallel()
	s := scope.New()
	var log []string
	s.Defer(func(e scope.Exit) error {
		log = append(log, "outer")
		return s.Defer(record(&log, "inner"))
	})
	if err := s.Close(scope.Succeeded()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(log, []string{"outer", "inner:success"}) {
		t.Errorf("ran %v", log)
	}
}

func TestRunExits(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	cause := errors.New("shutting down")
	tests := []struct {
		name     string
		cancel   bool
		f        func(ctx context.Context) error
		wantKind scope.Kind
		wantErr  error // the exit's error, matched with errors.Is
	}{
		{"success", false, func(context.Context) error { return nil }, scope.KindSuccess, nil},
		{"failure", false, func(context.Context) error { return boom }, scope.KindFailure, boom},
		{"interrupted", true, func(ctx context.Context) error { return ctx.Err() }, scope.KindInterrupted, cause},
		{"wrapped interruption", true, func(ctx context.Context) error { return fmt.Errorf("step 2: %w", context.Cause(ctx)) }, scope.KindInterrupted, cause},
		{"cancelled but nil", true, func(context.Context) error { return nil }, scope.KindSuccess, nil},
		{"cancelled but unrelated error", true, func(context.Context) error { return boom }, scope.KindFailure, boom},
		{"canceled error without cancellation", false, func(context.Context) error { return context.Canceled }, scope.KindFailure, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			if tt.cancel {
				cancel(cause)
			}
			var got scope.Exit
			err := scope.Run(ctx, func(ctx context.Context, s *scope.Scope) error {
				s.Defer(func(e scope.Exit) error { got = e; return nil })
				return tt.f(ctx)
			})
			if got.Kind() != tt.wantKind {
				t.Errorf("exit kind %v, want %v", got.Kind(), tt.wantKind)
			}
			if tt.wantErr == nil {
				if got.Err() != nil || err != nil {
					t.Errorf("exit err %v, Run err %v; want nil", got.Err(), err)
				}
			} else if !errors.Is(got.Err(), tt.wantErr) {
				t.Errorf("exit err %v, want %v", got.Err(), tt.wantErr)
			}
			if got.Failed() == got.Succeeded() {
				t.Errorf("Failed() and Succeeded() agree for %v", got)
			}
		})
	}
}

func TestRunRecoversPanicAndReturnsIt(t *testing.T) {
	t.Parallel()
	sentinel := errors.New("inner")
	var exit scope.Exit
	err := scope.Run(context.Background(), func(ctx context.Context, s *scope.Scope) error {
		s.Defer(func(e scope.Exit) error { exit = e; return nil })
		panic(fmt.Errorf("wrapped: %w", sentinel))
	})
	var p *scope.PanicError
	if !errors.As(err, &p) {
		t.Fatalf("Run returned %v, want a *PanicError", err)
	}
	if !errors.Is(err, sentinel) {
		t.Error("errors.Is does not see through the panic value")
	}
	if !strings.Contains(string(p.Stack), "TestRunRecoversPanicAndReturnsIt") {
		t.Errorf("stack does not name the panicking function:\n%s", p.Stack)
	}
	if exit.Kind() != scope.KindPanic || exit.Err() != p {
		t.Errorf("finalizer saw %v, want the same panic", exit)
	}
}

func TestRunJoinsFinalizerErrors(t *testing.T) {
	t.Parallel()
	fErr, finErr := errors.New("f"), errors.New("fin")
	err := scope.Run(context.Background(), func(ctx context.Context, s *scope.Scope) error {
		s.Defer(func(scope.Exit) error { return finErr })
		return fErr
	})
	if !errors.Is(err, fErr) || !errors.Is(err, finErr) {
		t.Errorf("Run returned %v, want both errors", err)
	}
	err = scope.Run(context.Background(), func(ctx context.Context, s *scope.Scope) error { return fErr })
	if err != fErr {
		t.Errorf("Run returned %v, want f's error unwrapped", err)
	}
}

func TestRunRejectsNil(t *testing.T) {
	t.Parallel()
	if err := scope.Run(context.Background(), nil); err == nil {
		t.Error("Run(nil f) returned nil")
	}
	//lint:ignore SA1012 the nil context is the bad input under test
	if err := scope.Run(nil, func(context.Context, *scope.Scope) error { return nil }); err == nil {
		t.Error("Run(nil ctx) returned nil")
	}
}

func TestAcquireReleaseSeesExit(t *testing.T) {
	t.Parallel()
	var log []string
	acquire := func(name string) func(context.Context) (string, error) {
		return func(context.Context) (string, error) { log = append(log, "acquire "+name); return name, nil }
	}
	release := func(r string, e scope.Exit) error {
		log = append(log, "release "+r+" "+e.Kind().String())
		return nil
	}
	boom := errors.New("boom")
	err := scope.Run(context.Background(), func(ctx context.Context, s *scope.Scope) error {
		a, err := scope.AcquireRelease(ctx, s, acquire("a"), release)
		if err != nil || a != "a" {
			t.Fatalf("acquire a: %q, %v", a, err)
		}
		if _, err := scope.AcquireRelease(ctx, s, acquire("b"), release); err != nil {
			t.Fatal(err)
		}
		return boom
	})
	if err != boom {
		t.Fatalf("Run: %v", err)
	}
	want := []string{"acquire a", "acquire b", "release b failure", "release a failure"}
	if !slices.Equal(log, want) {
		t.Errorf("log %v, want %v", log, want)
	}
}

func TestAcquireReleaseFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	released := false
	release := func(int, scope.Exit) error { released = true; return nil }

	s := scope.New()
	boom := errors.New("boom")
	if _, err := scope.AcquireRelease(ctx, s, func(context.Context) (int, error) { return 0, boom }, release); err != boom {
		t.Errorf("failed acquire returned %v", err)
	}
	if _, err := scope.AcquireRelease(ctx, s, func(context.Context) (int, error) { panic("no") }, release); err == nil {
		t.Error("panicking acquire returned nil")
	}
	s.Close(scope.Succeeded())
	if released {
		t.Error("release ran for a failed acquire")
	}
	called := false
	if _, err := scope.AcquireRelease(ctx, s, func(context.Context) (int, error) { called = true; return 1, nil }, release); !errors.Is(err, scope.ErrClosed) || called {
		t.Errorf("acquire on closed scope: err %v, acquire called %v", err, called)
	}

	// The scope closes while acquire runs: release runs at once.
	s2 := scope.New()
	v, err := scope.AcquireRelease(ctx, s2, func(context.Context) (int, error) {
		s2.Close(scope.Succeeded())
		return 7, nil
	}, release)
	if !errors.Is(err, scope.ErrClosed) || v != 0 || !released {
		t.Errorf("acquire racing close: v %d, err %v, released %v", v, err, released)
	}
}

func TestExitOf(t *testing.T) {
	t.Parallel()
	p := &scope.PanicError{Value: "x"}
	if e := scope.ExitOf(context.Background(), fmt.Errorf("w: %w", p)); e.Kind() != scope.KindPanic || e.Err() != p {
		t.Errorf("wrapped panic: %v", e)
	}
	if e := scope.Failed(nil); !errors.Is(e.Err(), scope.ErrFailed) || !e.Failed() {
		t.Errorf("Failed(nil) = %v", e)
	}
	if e := scope.Interrupted(nil); !errors.Is(e.Err(), context.Canceled) {
		t.Errorf("Interrupted(nil) = %v", e)
	}
	if e := scope.Panicked(nil); e.Kind() != scope.KindPanic || e.Err() == nil {
		t.Errorf("Panicked(nil) = %v", e)
	}
	if got := (scope.Exit{}).String(); got != "success" {
		t.Errorf("zero Exit = %q", got)
	}
	if got := scope.Failed(errors.New("boom")).String(); got != "failure: boom" {
		t.Errorf("String() = %q", got)
	}
}

func TestConcurrentAddAndClose(t *testing.T) {
	t.Parallel()
	// Every finalizer added concurrently with Close runs exactly once,
	// either by Close or at once by Add.
	const n = 64
	s := scope.New()
	var mu sync.Mutex
	runs := make(map[int]int)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s.Defer(func(scope.Exit) error {
				mu.Lock()
				runs[i]++
				mu.Unlock()
				return nil
			})
		})
	}
	wg.Go(func() { s.Close(scope.Succeeded()) })
	wg.Wait()
	s.Close(scope.Succeeded())
	for i := range n {
		if runs[i] != 1 {
			t.Errorf("finalizer %d ran %d times", i, runs[i])
		}
	}
}
