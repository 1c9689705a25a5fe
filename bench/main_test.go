package bench

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no benchmark leaves a goroutine behind. klog starts a
// flush daemon of its own when client-go is linked, and ants starts a
// default pool (its purge and clock goroutines) at init: goroutines already
// running when TestMain starts are not leaks of the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
		goleak.IgnoreCurrent(),
	)
}
