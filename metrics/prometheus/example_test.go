package prometheus_test

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	jkprom "github.com/jobkit/jobkit/metrics/prometheus"
	"github.com/jobkit/jobkit/sched"
)

// Export a scheduler's metrics: one image fails once and is retried. A
// server would expose reg with promhttp.HandlerFor(reg,
// promhttp.HandlerOpts{}); here a few series are gathered and printed.
func Example() {
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	metrics, err := jkprom.New(reg, jkprom.Options{})
	if err != nil {
		panic(err)
	}
	s, err := sched.New(sched.Config{Workers: 2, Metrics: metrics})
	if err != nil {
		panic(err)
	}
	var wg sync.WaitGroup
	q, err := sched.NewQueue(s, "resize", sched.QueueConfig[string, string]{
		Handler: func(ctx context.Context, job *sched.Job[string, string]) error {
			if job.Payload == "cat.png" && job.Attempt == 1 {
				return errors.New("disk busy") // retried
			}
			wg.Done()
			return nil
		},
		Retry: &sched.RetryPolicy{MaxRetries: 3, Base: 1}, // a nanosecond: retry at once
	})
	if err != nil {
		panic(err)
	}
	for _, img := range []string{"cat.png", "dog.png"} {
		wg.Add(1)
		if _, _, err := q.Add(ctx, img); err != nil {
			panic(err)
		}
	}
	if err := s.Start(ctx); err != nil {
		panic(err)
	}
	wg.Wait()
	if err := s.Stop(ctx); err != nil { // the runs' metrics are in once Stop returns
		panic(err)
	}

	families, err := reg.Gather()
	if err != nil {
		panic(err)
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			queue := m.GetLabel()[0].GetValue()
			switch f.GetName() {
			case "jobkit_sched_adds_total", "jobkit_sched_retries_total":
				fmt.Printf("%s{queue=%q} %v\n", f.GetName(), queue, m.GetCounter().GetValue())
			case "jobkit_sched_work_duration_seconds":
				fmt.Printf("%s_count{queue=%q} %v\n", f.GetName(), queue, m.GetHistogram().GetSampleCount())
			}
		}
	}
	// Output:
	// jobkit_sched_adds_total{queue="resize"} 2
	// jobkit_sched_retries_total{queue="resize"} 1
	// jobkit_sched_work_duration_seconds_count{queue="resize"} 3
}
