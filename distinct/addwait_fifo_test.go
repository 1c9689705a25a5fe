package distinct_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/jobkit/jobkit/distinct"
	"github.com/jobkit/jobkit/scope"
)

// AddWait is first come first served among waiting adders: an AddWait that
// arrives once room appears lines up behind the adder already waiting.
// Before, the newcomer tried before it lined up for the turn (await in
// gate.go) and took the room in most rounds, so a waiting adder could be
// starved by a stream of later ones.
func TestAddWaitIsFirstComeFirstServed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue[int](t, distinct.Config{Capacity: 1})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		overtaken := 0
		const rounds = 20
		for round := range rounds {
			old := 3 * round
			q.Add(old)
			s := scope.New()
			if _, err := q.Take(ctx, s, 1); err != nil {
				t.Fatal(err)
			}
			first := make(chan error, 1)
			go func() { _, err := q.AddWait(ctx, old+1); first <- err }()
			synctest.Wait() // A waits for room
			// Room appears, and a later adder asks for it.
			later := make(chan error, 1)
			s.Close(scope.Succeeded())
			// The later adder arrives right after the room appeared, from this
			// goroutine, before A had a chance to run (as a busy producer would).
			go func() { _, err := q.AddWait(ctx, old+2); later <- err }()
			synctest.Wait()
			select {
			case <-first:
				// A got the room; the later adder waits: free it.
				select {
				case <-later:
					t.Fatal("both added with capacity 1")
				default:
				}
				q.Remove(old + 1)
				<-later
				q.Remove(old + 2)
			default:
				// The later adder took the room before A.
				<-later
				overtaken++
				q.Remove(old + 2)
				<-first
				q.Remove(old + 1)
			}
		}
		if overtaken > 0 {
			t.Errorf("a waiting AddWait was overtaken by a later one in %d of %d rounds", overtaken, rounds)
		}
	})
}
