package schedtest_test

import (
	"testing"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/schedtest"
)

func TestMemoryBackend(t *testing.T) {
	t.Parallel()
	schedtest.TestBackend(t, func(*testing.T) sched.Backend[schedtest.Payload, string] {
		return sched.NewMemory[schedtest.Payload, string]()
	})
}
