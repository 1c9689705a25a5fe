package bench

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-co-op/gocron/v2"

	"github.com/jobkit/jobkit/cron"
)

// The cron benchmarks run the same jobs on jobkit's cron engine and on
// github.com/go-co-op/gocron/v2, in the same run:
//
//   - impl=jobkit: cron.Engine, default config (one scheduler, 8 ×
//     GOMAXPROCS workers); runs of a job never overlap.
//   - impl=gocron: gocron's default, which lets runs of a job overlap.
//   - impl=gocron-singleton: gocron with WithSingletonMode(LimitModeReschedule),
//     its mode in which runs of a job do not overlap (a run due while one is
//     going is skipped), which is the engine's semantics.
//
// Every job is a six-field cron spec in UTC with a handler that does
// nothing. Run them with a fixed count of operations, since an operation
// waits for real time:
//
//	go test -run '^$' -bench 'Cron_' -benchtime 2000x -count 6 -benchmem > cron.txt
//	benchstat -col /impl cron.txt

// cronImpl is a cron library under benchmark.
type cronImpl struct {
	name string
	// start returns a started scheduler to which add adds a job named
	// name on spec (six fields) running fn, and stop, which stops it.
	start func(b *testing.B) (add func(name, spec string, fn func()) error, stop func())
}

var cronImpls = []cronImpl{
	{"jobkit", startJobkitCron},
	{"gocron", func(b *testing.B) (func(string, string, func()) error, func()) { return startGocron(b, false) }},
	{"gocron-singleton", func(b *testing.B) (func(string, string, func()) error, func()) { return startGocron(b, true) }},
}

func startJobkitCron(b *testing.B) (func(string, string, func()) error, func()) {
	ctx := context.Background()
	e, err := cron.New(cron.Config{})
	if err != nil {
		b.Fatal(err)
	}
	if err := e.Start(ctx); err != nil {
		b.Fatal(err)
	}
	add := func(name, spec string, fn func()) error {
		return e.RegisterSpec(ctx, name, spec, func(context.Context, time.Time) error {
			fn()
			return nil
		}, cron.WithLocation(time.UTC))
	}
	return add, func() {
		if err := e.Stop(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func startGocron(b *testing.B, singleton bool) (func(string, string, func()) error, func()) {
	s, err := gocron.NewScheduler(gocron.WithLocation(time.UTC))
	if err != nil {
		b.Fatal(err)
	}
	s.Start()
	add := func(name, spec string, fn func()) error {
		opts := []gocron.JobOption{gocron.WithName(name)}
		if singleton {
			opts = append(opts, gocron.WithSingletonMode(gocron.LimitModeReschedule))
		}
		_, err := s.NewJob(gocron.CronJob(spec, true), gocron.NewTask(fn), opts...)
		return err
	}
	return add, func() {
		if err := s.Shutdown(); err != nil {
			b.Fatal(err)
		}
	}
}

// cpuTime returns the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCron_Register registers b.N jobs, each running once an hour at
// its own minute and second (so that none runs during the benchmark), on
// a started scheduler. ns/op and B/op are the cost of registering one job;
// heap-B/job is the heap the jobs hold after a GC, per job, and
// goroutines/job the goroutines they add to the started scheduler's. Use -benchtime 10000x for 10,000
// jobs.
func BenchmarkCron_Register(b *testing.B) {
	for _, impl := range cronImpls {
		b.Run("impl="+impl.name, func(b *testing.B) {
			b.ReportAllocs()
			// Schedules start in an hour's time: nothing runs during
			// the benchmark, which lasts less than an hour.
			first := time.Now().UTC().Add(time.Hour)
			add, stop := impl.start(b)
			g0 := runtime.NumGoroutine()
			heap0 := cronHeap()
			b.ResetTimer()
			for i := range b.N {
				k := first.Minute()*60 + first.Second() + i
				spec := fmt.Sprintf("%d %d * * * *", k%60, (k/60)%60)
				if err := add(fmt.Sprintf("job-%07d", i), spec, func() {}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			heap := cronHeap()
			b.ReportMetric(float64(int64(heap)-int64(heap0))/float64(b.N), "heap-B/job")
			b.ReportMetric(float64(runtime.NumGoroutine()-g0)/float64(b.N), "goroutines/job")
			stop()
		})
	}
}

// cronRunJobs is the number of jobs of BenchmarkCron_Run, each running
// every second.
const cronRunJobs = 1000

// BenchmarkCron_Run runs 1,000 jobs that run every second ("* * * * * *")
// until b.N runs have started, with handlers that do nothing. The wall time
// per op is set by the clock (1 ms: 1,000 runs a second) and is the same for
// every implementation. What differs: cpu-ns/run, the process's CPU time
// (user and system) per run, which is the scheduling overhead; B/op and
// allocs/op, allocated per run; late-µs/run, how long after its second a
// run started, on average (its lateness); goroutines, those of the
// scheduler and its jobs as the last run started. Use -benchtime 2000x or
// more.
func BenchmarkCron_Run(b *testing.B) {
	for _, impl := range cronImpls {
		b.Run("impl="+impl.name, func(b *testing.B) {
			b.ReportAllocs()
			var (
				armed atomic.Bool // runs count once the measurement starts
				runs  atomic.Int64
				late  atomic.Int64 // nanoseconds, summed
				done  = make(chan struct{})
			)
			target := int64(b.N)
			fn := func() {
				if !armed.Load() {
					return
				}
				now := time.Now()
				late.Add(int64(now.Sub(now.Truncate(time.Second))))
				if runs.Add(1) == target {
					close(done)
				}
			}
			g0 := runtime.NumGoroutine()
			add, stop := impl.start(b)
			for i := range cronRunJobs {
				if err := add(fmt.Sprintf("job-%04d", i), "* * * * * *", fn); err != nil {
					b.Fatal(err)
				}
			}
			// Start measuring at a second's boundary, after the
			// registrations' garbage is collected.
			runtime.GC()
			time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 100*time.Millisecond)))
			cpu0 := cpuTime()
			b.ResetTimer()
			armed.Store(true)
			<-done
			b.StopTimer()
			cpu := cpuTime() - cpu0
			goroutines := runtime.NumGoroutine() - g0
			stop()
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/run")
			b.ReportMetric(float64(late.Load())/float64(runs.Load())/1e3, "late-µs/run")
			b.ReportMetric(float64(goroutines), "goroutines")
		})
	}
}

// cronHeap returns the live heap after a garbage collection.
func cronHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
