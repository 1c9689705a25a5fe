package schedtest_test

import (
	"sync"
	"testing"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/schedtest"
)

// schedtest.Open: "The suite calls it once per subtest." A backend may
// rely on that, naming its storage after t.Name(), say.
func TestOpenIsCalledOncePerSubtest(t *testing.T) {
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
	for name, n := range calls {
		if n != 1 {
			t.Errorf("%s called Open %d times", name, n)
		}
	}
}
