package schedhttp

import (
	"net/http"
	"testing"
	"time"
)

// cycle is an error that wraps itself.
type cycle struct{}

func (e *cycle) Error() string { return "cycle" }
func (e *cycle) Unwrap() error { return e }

// An error that wraps itself (a custom backend's, through the Inspector)
// is a 500, found at once. Before, errors.As walked it for ever on the
// request's goroutine.
func TestStatusOfAnErrorThatWrapsItself(t *testing.T) {
	t.Parallel()
	got := make(chan int, 1)
	go func() { got <- status(&cycle{}) }()
	select {
	case code := <-got:
		if code != http.StatusInternalServerError {
			t.Errorf("status = %d, want 500", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("status did not return in 10 s: the error's chain was walked for ever")
	}
}
