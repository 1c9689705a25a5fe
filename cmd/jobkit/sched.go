package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jobkit/jobkit/governor"
	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/schedhttp"
)

// The scheduler demo's timings: short, so that it ends in about half a
// second, and long enough that caps, the retry delay and the snooze show.
const (
	emailWork  = 30 * time.Millisecond  // one email
	reportWork = 60 * time.Millisecond  // one report
	retryBase  = 100 * time.Millisecond // the delay before the first retry
	snoozeFor  = 150 * time.Millisecond // the snoozed report waits this long
	govSlots   = 2                      // the governor's slots
	apiPrefix  = "/jobs"                // where the management API is mounted
)

// schedConfig configures the scheduler demo.
type schedConfig struct {
	// HTTP, if not empty, is the address the management API listens on
	// while the demo runs, and after it until ctx is done.
	HTTP string
	// listener, if not nil, is the listener on HTTP, opened by main before
	// the first part so that a bad address is refused at once.
	listener net.Listener
	// serving, if not nil, is called with the API's URL once it listens and
	// the jobs run (finished false), and once the demo has finished and
	// before runSched waits for ctx (finished true). Tests use it.
	serving func(url string, finished bool)
}

// email is the payload of the emails queue; its key is To.
type email struct{ To, Subject string }

var (
	errSMTP     = errors.New("smtp: connection reset by peer")
	errDiskFull = errors.New("write report: no space left on device")
)

// gauge counts the runs going on and remembers the most at once.
type gauge struct{ now, most atomic.Int64 }

func (g *gauge) enter() {
	n := g.now.Add(1)
	for m := g.most.Load(); n > m && !g.most.CompareAndSwap(m, n); m = g.most.Load() {
	}
}

func (g *gauge) leave() { g.now.Add(-1) }

// runSched shows the scheduler: two queues of different priorities and
// caps share the workers under a governor; one email fails once and is
// retried, one fails for good (Permanent), one report is snoozed and one
// fails until its retries run out. It writes a line for each run as it
// ends, then the error queue and a summary of each queue, and, with
// cfg.HTTP, serves the management API until ctx is done.
func runSched(ctx context.Context, out io.Writer, cfg schedConfig) (err error) {
	start := time.Now()
	var mu sync.Mutex // serialises output and the handlers' notes
	say := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, format+"\n", a...)
	}
	event := func(queue, format string, a ...any) {
		say("%7s  %-7s  %s", "+"+ms(time.Since(start)), queue, fmt.Sprintf(format, a...))
	}

	// A governor admits every batch. The demo turns its CPU and memory
	// limits off, so that it never waits for a busy machine: it admits on
	// its 2 slots, fewer than the queues' caps add up to (2 + 1).
	g, err := governor.New(governor.Config{
		Slots: govSlots, Interval: 100 * time.Millisecond,
		MaxCPUPercent: 100, MaxMemoryPercent: 100,
	})
	if err != nil {
		return err
	}
	if err := g.Start(ctx); err != nil {
		_ = g.Stop(context.Background())
		return err
	}
	defer func() { _ = g.Stop(context.Background()) }()

	s, err := sched.New(sched.Config{
		Workers: 4, Governor: g,
		// Keep what ran for an hour, for the management API.
		Retention: &sched.Retention{
			Succeeded: time.Hour, Failed: time.Hour, Cancelled: time.Hour,
			MaxSucceeded: 100, MaxFailed: 100, MaxCancelled: 100,
		},
	})
	if err != nil {
		return err
	}
	defer func() {
		// Ends the demo early if it did not finish: cancel the handlers.
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if serr := s.StopAndCancel(sctx); err == nil {
			err = serr
		}
	}()

	// The handlers call finish when they return a job's last result, so
	// that the demo knows when every job has ended.
	var (
		all          gauge
		mails, reps  gauge
		firstTry     = map[string]time.Time{} // when a retried job's first run started
		snoozedAt    time.Time                // when the snoozed report was snoozed
		snoozedCount int
		allDone      = make(chan struct{})
		remaining    atomic.Int64
	)
	finish := func() {
		if remaining.Add(-1) == 0 {
			close(allDone)
		}
	}
	emails, err := sched.NewQueue(s, "emails", sched.QueueConfig[email, string]{
		Key:            func(e email) string { return e.To },
		Priority:       3,
		MaxConcurrency: 2,
		BatchSize:      1, // one email a batch: each run holds a governor slot of its own
		Retry:          &sched.RetryPolicy{MaxRetries: 2, Base: retryBase},
		Handler: func(ctx context.Context, job *sched.Job[email, string]) error {
			all.enter()
			defer all.leave()
			mails.enter()
			defer mails.leave()
			to := job.Payload.To
			if i := strings.IndexByte(to, '@'); i <= 0 || !strings.Contains(to[i:], ".") {
				event("emails", "%s: invalid address: failed for good, not retried", to)
				finish()
				return sched.Permanent(fmt.Errorf("invalid address %q", to))
			}
			if err := work(ctx, emailWork); err != nil {
				return err // the demo was interrupted: a rerun
			}
			if to == "carol@example.com" && job.Attempt == 1 {
				mu.Lock()
				firstTry[to] = job.StartedAt
				mu.Unlock()
				event("emails", "%s: attempt 1 failed: %v; retried in %v", to, errSMTP, retryBase)
				return errSMTP
			}
			if job.Attempt > 1 {
				mu.Lock()
				gap := job.StartedAt.Sub(firstTry[to])
				mu.Unlock()
				event("emails", "%s: attempt %d, started %s after attempt 1: sent", to, job.Attempt, ms(gap))
			} else {
				event("emails", "%s: sent %q", to, job.Payload.Subject)
			}
			finish()
			return nil
		},
	})
	if err != nil {
		return err
	}
	reportRetry := sched.RetryPolicy{MaxRetries: 1, Base: retryBase}
	reports, err := sched.NewQueue(s, "reports", sched.QueueConfig[string, string]{
		Priority:       1,
		MaxConcurrency: 1,
		BatchSize:      1,
		Retry:          &reportRetry,
		Handler: func(ctx context.Context, job *sched.Job[string, string]) error {
			all.enter()
			defer all.leave()
			reps.enter()
			defer reps.leave()
			name := job.Payload
			if name == "weekly" {
				mu.Lock()
				snoozedCount++
				first, at := snoozedCount == 1, snoozedAt
				if first {
					snoozedAt = time.Now()
				}
				mu.Unlock()
				if first {
					event("reports", "weekly: sales figures not loaded yet: snoozed for %v (attempt %d, not spent)", snoozeFor, job.Attempt)
					return sched.Snooze(snoozeFor)
				}
				if err := work(ctx, reportWork); err != nil {
					return err
				}
				event("reports", "weekly: ran again %s after its snooze, still attempt %d: done", ms(job.StartedAt.Sub(at)), job.Attempt)
				finish()
				return nil
			}
			if err := work(ctx, reportWork); err != nil {
				return err
			}
			if name == "quarterly" {
				if job.Attempt <= reportRetry.MaxRetries {
					event("reports", "quarterly: attempt %d failed: %v; retried in %v", job.Attempt, errDiskFull, retryBase)
				} else {
					event("reports", "quarterly: attempt %d failed: %v; no retries left", job.Attempt, errDiskFull)
					finish()
				}
				return errDiskFull
			}
			event("reports", "%s: done", name)
			finish()
			return nil
		},
	})
	if err != nil {
		return err
	}

	var url string
	if cfg.HTTP != "" {
		stopServing, u, err := serveAPI(s, cfg.HTTP, cfg.listener)
		if err != nil {
			return err
		}
		defer stopServing()
		url = u
	}

	say("two queues, 4 workers: emails (priority 3, at most 2 at once), reports (priority 1, at most 1 at once)")
	say("a governor admits each run: %d slots; it samples CPU and memory every 100ms, limits off", govSlots)

	if url != "" {
		say("management API (read-only) at %s, for example:", url)
		say("  curl %s/queues", url)
		say("  curl '%s/entries?state=failed'", url)
	}

	mailsToSend := []email{
		{"ann@example.com", "welcome"}, {"bob@", "welcome"}, {"carol@example.com", "invoice"},
		{"dave@example.com", "invoice"}, {"erin@example.com", "reminder"}, {"frank@example.com", "reminder"},
	}
	reportsToRun := []string{"daily", "weekly", "monthly", "quarterly"}
	remaining.Store(int64(len(mailsToSend) + len(reportsToRun)))
	if _, err := emails.AddAll(ctx, mailsToSend); err != nil {
		return err
	}
	if _, err := reports.AddAll(ctx, reportsToRun); err != nil {
		return err
	}

	start = time.Now() // the times printed count from here
	if err := s.Start(ctx); err != nil {
		return err
	}
	if cfg.serving != nil && url != "" {
		cfg.serving(url, false)
	}
	select {
	case <-allDone:
	case <-ctx.Done():
		return ctx.Err()
	}
	// Every job has returned its last result: Stop waits until the last runs
	// are settled.
	if err := s.Stop(ctx); err != nil {
		return err
	}

	say("error queue:")
	for e, err := range s.Inspector().List(ctx, sched.Query{States: []sched.State{sched.StateFailed}}) {
		if err != nil {
			return err
		}
		say("  %s  %s: failed after %s", e.Cursor(), e.Key, plural(e.Attempts, "attempt"))
		for _, re := range e.Errors {
			say("    attempt %d at +%s: %s (%s)", re.Attempt, ms(re.At.Sub(start)), re.Message, re.Type)
		}
	}
	sums, err := s.Inspector().Summaries(ctx)
	if err != nil {
		return err
	}
	say("summary:")
	most := map[string]*gauge{"emails": &mails, "reports": &reps}
	// The summaries' window is the last minute, which holds the whole demo
	// unless it ran longer: their throughput is then per second of the
	// demo, not of the minute (a 0.3 s demo would show a 60th of its rate).
	took := time.Since(start)
	whole := took < time.Minute
	span := "last minute"
	if whole {
		span = "in " + ms(took)
	}
	for _, q := range sums {
		c := q.Counts
		rate := q.Throughput
		if whole {
			rate = float64(q.Succeeded) / took.Seconds()
		}
		say("  %-7s  priority %d, cap %d: %d added, %d succeeded, %d failed, %d live; at most %d at once; "+
			"%s: %d runs, %.0f%% failed, %.0f jobs/s; slot-time %s",
			q.Name, q.Priority, q.MaxConcurrency, c.Added, c.Succeeded, c.Failed, c.Live(), most[q.Name].most.Load(),
			span, q.Succeeded+q.Failed, 100*q.FailureRate, rate, ms(g.Usage(q.Name)))
	}
	snap := g.Snapshot()
	reading := fmt.Sprintf("no reading (%v)", snap.Err)
	if !snap.Stale {
		reading = fmt.Sprintf("CPU %.0f%% of %g cores (%v), memory %.0f%% used (%v)",
			snap.CPUPercent, snap.CPUCores, snap.CPUSource, snap.MemoryPercent(), snap.MemorySource)
	}
	say("governor: at most %d jobs ran at once on its %d slots; last reading: %s", all.most.Load(), snap.Slots, reading)
	say("finished in %s", ms(time.Since(start)))

	if url != "" {
		if cfg.serving != nil {
			cfg.serving(url, true)
		}
		say("the scheduler has stopped; its entries stay at %s until interrupted (Ctrl-C)", url)
		<-ctx.Done()
	}
	return nil
}

// serveAPI serves s's management API, read-only, on addr under apiPrefix.
// It returns a function that shuts the server down and waits for it, and
// the API's URL.
func serveAPI(s *sched.Scheduler, addr string, ln net.Listener) (stop func(), url string, err error) {
	h, err := schedhttp.New(s.Inspector(), schedhttp.Options{AllowWrites: false})
	if err != nil {
		return nil, "", err
	}
	if ln == nil {
		if ln, err = net.Listen("tcp", addr); err != nil {
			return nil, "", err
		}
	}
	mux := http.NewServeMux()
	mux.Handle(apiPrefix+"/", http.StripPrefix(apiPrefix, h))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(ln) // ErrServerClosed after Shutdown
	}()
	stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			_ = srv.Close()
		}
		<-served
	}
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return stop, "http://" + net.JoinHostPort(host, port) + apiPrefix, nil
}

// work takes d, or returns ctx's error if it is done first.
func work(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ms formats d in whole milliseconds.
func ms(d time.Duration) string { return d.Round(time.Millisecond).String() }

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
