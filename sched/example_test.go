package sched_test

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jobkit/jobkit/sched"
)

// Resize images: a queue keyed by image name, with a retry policy; one
// image fails once and is retried, a duplicate add is refused.
func Example() {
	ctx := context.Background()
	s, err := sched.New(sched.Config{Workers: 2})
	if err != nil {
		panic(err)
	}
	var mu sync.Mutex
	done := map[string]int{}
	var wg sync.WaitGroup
	q, err := sched.NewQueue(s, "resize", sched.QueueConfig[string, string]{
		Handler: func(ctx context.Context, job *sched.Job[string, string]) error {
			if job.Payload == "cat.png" && job.Attempt == 1 {
				return errors.New("disk busy") // retried
			}
			mu.Lock()
			done[job.Payload] = job.Attempt
			mu.Unlock()
			wg.Done()
			return nil
		},
		Retry: &sched.RetryPolicy{MaxRetries: 3, Base: 1}, // a nanosecond: retry at once
	})
	if err != nil {
		panic(err)
	}
	for _, img := range []string{"cat.png", "dog.png", "cat.png"} {
		_, added, err := q.Add(ctx, img)
		if err != nil {
			panic(err)
		}
		if added {
			wg.Add(1)
		}
		fmt.Printf("add %s: %v\n", img, added)
	}
	if err := s.Start(ctx); err != nil {
		panic(err)
	}
	wg.Wait()
	if err := s.Stop(ctx); err != nil {
		panic(err)
	}
	c, _ := q.Counts(ctx)
	fmt.Printf("cat.png on attempt %d, dog.png on attempt %d; %d succeeded\n", done["cat.png"], done["dog.png"], c.Succeeded)
	// Output:
	// add cat.png: true
	// add dog.png: true
	// add cat.png: false
	// cat.png on attempt 2, dog.png on attempt 1; 2 succeeded
}

// Add a batch of jobs in one call: a payload whose key is live, or comes
// earlier in the same call, is refused as a duplicate and reported with
// the ID of the entry that blocks it.
func ExampleQueue_AddAll() {
	ctx := context.Background()
	s, err := sched.New(sched.Config{Workers: 1})
	if err != nil {
		panic(err)
	}
	q, err := sched.NewQueue(s, "thumbnails", sched.QueueConfig[string, string]{
		Handler: func(ctx context.Context, job *sched.Job[string, string]) error { return nil },
	})
	if err != nil {
		panic(err)
	}
	if _, _, err := q.Add(ctx, "b.png"); err != nil {
		panic(err)
	}
	imgs := []string{"a.png", "b.png", "c.png", "a.png"}
	out, err := q.AddAll(ctx, imgs)
	if err != nil {
		panic(err)
	}
	for i, r := range out {
		fmt.Printf("%s: added %v, entry %d\n", imgs[i], r.Added, r.ID)
	}
	// Output:
	// a.png: added true, entry 2
	// b.png: added false, entry 1
	// c.png: added true, entry 3
	// a.png: added false, entry 2
}
