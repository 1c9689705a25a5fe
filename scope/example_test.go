package scope_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/jobkit/jobkit/scope"
)

// Finalizers run last-in first-out and see how the scope ended.
func ExampleRun() {
	err := scope.Run(context.Background(), func(ctx context.Context, s *scope.Scope) error {
		s.Defer(func(e scope.Exit) error {
			fmt.Println("close connection after", e)
			return nil
		})
		s.Defer(func(e scope.Exit) error {
			if e.Failed() {
				fmt.Println("roll back transaction")
				return nil
			}
			fmt.Println("commit transaction")
			return nil
		})
		return errors.New("disk full")
	})
	fmt.Println("Run returned:", err)
	// Output:
	// roll back transaction
	// close connection after failure: disk full
	// Run returned: disk full
}

// A panic is recovered, shown to the finalizers and returned as an error.
func ExampleRun_panic() {
	err := scope.Run(context.Background(), func(ctx context.Context, s *scope.Scope) error {
		s.Defer(func(e scope.Exit) error {
			fmt.Println("finalizer saw", e.Kind())
			return nil
		})
		panic("bug")
	})
	var p *scope.PanicError
	fmt.Println(errors.As(err, &p), p.Value)
	// Output:
	// finalizer saw panic
	// true bug
}

// AcquireRelease registers a release that sees the scope's Exit.
func ExampleAcquireRelease() {
	_ = scope.Run(context.Background(), func(ctx context.Context, s *scope.Scope) error {
		lease, err := scope.AcquireRelease(ctx, s,
			func(context.Context) (string, error) { return "lease-42", nil },
			func(l string, e scope.Exit) error {
				fmt.Println("release", l, "after", e)
				return nil
			})
		if err != nil {
			return err
		}
		fmt.Println("working under", lease)
		return nil
	})
	// Output:
	// working under lease-42
	// release lease-42 after success
}
