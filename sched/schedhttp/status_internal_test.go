package schedhttp

import (
	"net/http"
	"testing"

	"github.com/jobkit/jobkit/internal/testkit"
)

// An error that wraps itself (a custom backend's, through the Inspector)
// is a 500, found at once. Before, errors.As walked it for ever on the
// request's goroutine.
func TestStatusOfAnErrorThatWrapsItself(t *testing.T) {
	t.Parallel()
	var code int
	testkit.Within(t, "status", func() { code = status(&testkit.Cycle{}) })
	if code != http.StatusInternalServerError {
		t.Errorf("status = %d, want 500", code)
	}
}
