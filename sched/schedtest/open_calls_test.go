package schedtest_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/schedtest"
)

// schedtest.Open: "The suite calls it at least once per subtest, and
// again, with the same t, in a subtest that needs a queue opened with other
// QueueInfo (Groups, BlockFailed, Retention)". (The doc said once per
// subtest, which a backend naming its storage after t.Name() relied on.)
func TestOpenIsCalledPerSubtestAndPerQueueInfo(t *testing.T) {
	var mu sync.Mutex
	calls := make(map[string]int)
	t.Run("suite", func(t *testing.T) {
		schedtest.TestBackend(t, func(t *testing.T) sched.Backend[P, string] {
			mu.Lock()
			calls[t.Name()]++
			mu.Unlock()
			return sched.NewMemory[P, string]()
		})
	})
	mu.Lock()
	defer mu.Unlock()
	if len(calls) == 0 {
		t.Fatal("Open never called")
	}
	again := map[string]bool{"Groups": true, "BlockFailed": true, "Retention": true}
	for name, n := range calls {
		if sub := name[strings.LastIndex(name, "/")+1:]; (n > 1) != again[sub] {
			t.Errorf("%s called Open %d times", name, n)
		}
	}
}
