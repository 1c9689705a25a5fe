package logbuf

import (
	"strings"
	"sync"
	"testing"
)

// Records written from several goroutines at once all arrive whole.
func TestBufferKeepsConcurrentRecords(t *testing.T) {
	var b Buffer
	log := b.Logger()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for range 100 {
				log.Debug("record", "g", g)
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 800 {
		t.Fatalf("%d lines, want 800", len(lines))
	}
	for _, l := range lines {
		if !strings.Contains(l, "level=DEBUG msg=record g=") {
			t.Fatalf("line %q is not a whole record", l)
		}
	}
}
