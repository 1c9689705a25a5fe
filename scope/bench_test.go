package scope_test

import (
	"context"
	"testing"

	"github.com/jobkit/jobkit/scope"
)

var nop = scope.FinalizerFunc(func(scope.Exit) error { return nil })

// BenchmarkRun is the cost of scope.Run around a function that does
// nothing, and with one finalizer registered and run; serial and in
// parallel.
func BenchmarkRun(b *testing.B) {
	ctx := context.Background()
	empty := func(context.Context, *scope.Scope) error { return nil }
	withFinalizer := func(_ context.Context, s *scope.Scope) error { return s.Add(nop) }
	for _, bc := range []struct {
		name string
		f    func(context.Context, *scope.Scope) error
	}{{"finalizers=0", empty}, {"finalizers=1", withFinalizer}} {
		b.Run(bc.name+"/serial", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = scope.Run(ctx, bc.f)
			}
		})
		b.Run(bc.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					_ = scope.Run(ctx, bc.f)
				}
			})
		})
	}
}

// BenchmarkNewClose is a scope made with New, one finalizer, and Close.
func BenchmarkNewClose(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		s := scope.New()
		_ = s.Add(nop)
		_ = s.Close(scope.Succeeded())
	}
}
