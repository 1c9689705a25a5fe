package scope_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/jobkit/jobkit/scope"
)

// goexitIn runs f in a goroutine of its own and waits until the goroutine
// has ended, however it ends (f is expected to call runtime.Goexit).
func goexitIn(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
}

func TestRunClosesTheScopeWhenFCallsGoexit(t *testing.T) {
	t.Parallel()
	var saw []scope.Exit
	returned := false
	goexitIn(func() {
		_ = scope.Run(context.Background(), func(ctx context.Context, s *scope.Scope) error {
			s.Defer(func(e scope.Exit) error { saw = append(saw, e); return nil })
			s.Defer(func(e scope.Exit) error { saw = append(saw, e); return nil })
			runtime.Goexit()
			return nil
		})
		returned = true
	})
	if returned {
		t.Fatal("Run returned although f called Goexit")
	}
	if len(saw) != 2 {
		t.Fatalf("%d finalizers ran, want 2", len(saw))
	}
	for _, e := range saw {
		if e.Kind() != scope.KindFailure || !errors.Is(e.Err(), scope.ErrGoexit) {
			t.Errorf("finalizer saw %v, want a failure with ErrGoexit", e)
		}
	}
}

func TestGoexitInAFinalizerRunsTheRestAndClosesTheScope(t *testing.T) {
	t.Parallel()
	for _, viaRun := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			var ran []string
			var kept *scope.Scope
			body := func(s *scope.Scope) {
				kept = s
				s.Defer(func(scope.Exit) error { ran = append(ran, "first"); return nil })
				s.Defer(func(scope.Exit) error { ran = append(ran, "goexit"); runtime.Goexit(); return nil })
				s.Defer(func(scope.Exit) error { ran = append(ran, "second goexit"); runtime.Goexit(); return nil })
				s.Defer(func(scope.Exit) error { ran = append(ran, "last"); return nil })
			}
			goexitIn(func() {
				if viaRun {
					_ = scope.Run(context.Background(), func(ctx context.Context, s *scope.Scope) error {
						body(s)
						return nil
					})
					return
				}
				s := scope.New()
				body(s)
				_ = s.Close(scope.Succeeded())
			})
			if want := []string{"last", "second goexit", "goexit", "first"}; !slices.Equal(ran, want) {
				t.Errorf("ran %v, want %v", ran, want)
			}
			if !kept.Closed() {
				t.Error("scope not closed")
			}
			// A later Close must return (synctest reports a deadlock if not)
			// and must not run anything again.
			if err := kept.Close(scope.Succeeded()); err != nil {
				t.Errorf("later Close = %v", err)
			}
			if len(ran) != 4 {
				t.Errorf("finalizers ran again: %v", ran)
			}
		})
	}
}

func TestCloseFromItsOwnFinalizerReturns(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := scope.New()
		var nested error = errors.New("not called")
		var ran []string
		s.Defer(func(scope.Exit) error { ran = append(ran, "first"); return nil })
		s.Defer(func(scope.Exit) error {
			nested = s.Close(scope.Failed(errors.New("ignored")))
			ran = append(ran, "closer")
			return nil
		})
		if err := s.Close(scope.Succeeded()); err != nil {
			t.Fatalf("Close = %v", err)
		}
		if nested != nil {
			t.Errorf("nested Close = %v, want nil", nested)
		}
		if !slices.Equal(ran, []string{"closer", "first"}) {
			t.Errorf("ran %v", ran)
		}
	})
}

func TestCloseFromAFinalizerOfRunReturns(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var exit scope.Exit
		err := scope.Run(context.Background(), func(ctx context.Context, s *scope.Scope) error {
			s.Defer(func(e scope.Exit) error { exit = e; return nil })
			return s.Defer(func(scope.Exit) error { return s.Close(scope.Failed(errors.New("late"))) })
		})
		if err != nil || !exit.Succeeded() {
			t.Errorf("Run = %v, exit %v; want nil and success (the first exit wins)", err, exit)
		}
	})
}

// A finalizer of one scope that closes another scope, which is closing in
// another goroutine, does not wait for it: it could be waited for in turn.
func TestCloseFromAnotherScopesFinalizerDoesNotWait(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		a, b := scope.New(), scope.New()
		aClosing := make(chan struct{})
		bClosed := make(chan struct{})
		a.Defer(func(scope.Exit) error {
			close(aClosing)
			<-bClosed // a's finalizer waits for b's Close below
			return nil
		})
		go a.Close(scope.Succeeded())
		<-aClosing
		b.Defer(func(scope.Exit) error {
			err := a.Close(scope.Succeeded()) // a is closing, waiting on us
			close(bClosed)
			return err
		})
		if err := b.Close(scope.Succeeded()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
	})
}

func TestConcurrentCloseOutsideFinalizersStillWaits(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := scope.New()
		release := make(chan struct{})
		var done bool
		s.Defer(func(scope.Exit) error { <-release; done = true; return nil })
		go s.Close(scope.Succeeded())
		synctest.Wait() // the first Close is blocked in the finalizer
		second := make(chan struct{})
		go func() {
			s.Close(scope.Succeeded())
			close(second)
		}()
		synctest.Wait()
		select {
		case <-second:
			t.Fatal("second Close returned before the finalizer finished")
		default:
		}
		close(release)
		<-second
		if !done {
			t.Error("second Close does not see the finalizer's write")
		}
	})
}

func TestNilFinalizersAndFunctionsAreRefused(t *testing.T) {
	t.Parallel()
	s := scope.New()
	for name, err := range map[string]error{
		"Add(nil)":                s.Add(nil),
		"Add(FinalizerFunc(nil))": s.Add(scope.FinalizerFunc(nil)),
		"Defer(nil)":              s.Defer(nil),
	} {
		if !errors.Is(err, scope.ErrInvalid) {
			t.Errorf("%s = %v, want ErrInvalid", name, err)
		}
	}
	if s.TryAdd(nil) || s.TryAdd(scope.FinalizerFunc(nil)) {
		t.Error("TryAdd of a nil finalizer reported true")
	}
	if err := s.Close(scope.Succeeded()); err != nil {
		t.Errorf("Close after refused nil finalizers = %v, want nil", err)
	}
	// On a closed scope too: refused, not run.
	if err := s.Add(scope.FinalizerFunc(nil)); !errors.Is(err, scope.ErrInvalid) {
		t.Errorf("Add(FinalizerFunc(nil)) on a closed scope = %v", err)
	}
	exit, err := scope.Call(context.Background(), nil)
	if !errors.Is(err, scope.ErrInvalid) || !errors.Is(exit.Err(), scope.ErrInvalid) || exit.Kind() != scope.KindFailure {
		t.Errorf("Call(nil) = %v, %v; want a failure with ErrInvalid", exit, err)
	}
	var p *scope.PanicError
	if errors.As(err, &p) {
		t.Error("Call(nil) returned a *PanicError")
	}
}

func TestNilPanicErrorIsHarmless(t *testing.T) {
	t.Parallel()
	var nilp *scope.PanicError
	e := scope.ExitOf(context.Background(), error(nilp))
	if e.Kind() != scope.KindFailure {
		t.Errorf("ExitOf(nil *PanicError) kind = %v, want failure", e.Kind())
	}
	for _, s := range []string{e.String(), nilp.Error(), scope.Panicked(nil).String()} {
		if s == "" {
			t.Error("empty string")
		}
	}
	if nilp.Unwrap() != nil {
		t.Error("Unwrap of nil *PanicError is not nil")
	}
	if e := scope.ExitOf(context.Background(), errors.Join(errors.New("x"), error(nilp))); e.Kind() != scope.KindFailure {
		t.Errorf("joined nil *PanicError: %v", e)
	}
	_ = scope.Failed(nilp).String()
	_ = scope.Interrupted(nilp).String()
}

// Scopes come from blocks and are never reused: a *Scope kept after its Run
// returned stays closed with its own exit, and closing it again cannot touch
// a scope that is open now.
func TestScopeKeptAfterRunStaysItsOwn(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	var kept *scope.Scope
	_ = scope.Run(context.Background(), func(ctx context.Context, s *scope.Scope) error {
		kept = s
		return boom
	})
	seen := map[*scope.Scope]bool{kept: true}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 500 {
				_ = scope.Run(context.Background(), func(ctx context.Context, s *scope.Scope) error {
					mu.Lock()
					defer mu.Unlock()
					if seen[s] {
						t.Errorf("scope %p handed out twice", s)
					}
					seen[s] = true
					return nil
				})
			}
		})
	}
	wg.Wait()
	if !kept.Closed() {
		t.Fatal("kept scope is open")
	}
	if kept.TryAdd(scope.FinalizerFunc(func(scope.Exit) error { return nil })) {
		t.Error("TryAdd on the kept scope reported true")
	}
	var late scope.Exit
	kept.Defer(func(e scope.Exit) error { late = e; return nil })
	if !errors.Is(late.Err(), boom) {
		t.Errorf("late finalizer on the kept scope saw %v, want its own exit", late)
	}
	// Closing the kept scope while another scope is open leaves that one be.
	_ = scope.Run(context.Background(), func(ctx context.Context, s *scope.Scope) error {
		ran := false
		s.Defer(func(scope.Exit) error { ran = true; return nil })
		if err := kept.Close(scope.Succeeded()); err != nil {
			t.Errorf("Close of the kept scope = %v", err)
		}
		if ran || s.Closed() {
			t.Error("closing the kept scope closed the open one")
		}
		return nil
	})
}
