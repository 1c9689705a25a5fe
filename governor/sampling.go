package governor

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/jobkit/jobkit/internal/isolate"
	"github.com/jobkit/jobkit/internal/panicval"
	"github.com/jobkit/jobkit/internal/stack"
)

// lateIntervals is how many intervals a reading may go without a returned
// sample before it is stale.
const lateIntervals = 2

// sampled is the outcome of one call of the Sampler.
type sampled struct {
	r   Reading
	err error
}

// loopState is what the sampling loop holds. It outlives a run of the loop
// that a call on its goroutine ends (see fault), so that the run taking its
// place goes on where it stopped: Start still waits on first, Stop on
// stopped and on the sample under way, and the ticker and the timer keep
// their times.
type loopState struct {
	first   chan struct{} // closed once the first sample is applied, applying it faulted or Stop came first; nil then
	stopped chan struct{} // closed when the last run has returned
	results chan sampled  // the outcome of the sample under way
	busy    bool          // a sample is under way: its outcome is still to come on results
	faulted bool          // a run faulted since the last tick the loop took in its stride
	tick    *time.Ticker
	late    *time.Timer
}

// loop runs the sampling: it calls the Sampler at once, closes first when
// that call has been applied, and calls it again on every tick of the
// interval while no call is under way. Each call runs on a goroutine of its
// own (sample), so that the loop can mark the reading stale while a call
// hangs. When ctx is cancelled, the loop waits for a call under way to
// return, then closes stopped.
func (g *Governor) loop(ctx context.Context, first, stopped chan struct{}) {
	st := &loopState{
		first: first, stopped: stopped, results: make(chan sampled, 1), busy: true,
		late: time.NewTimer(times(lateIntervals, g.cfg.Interval)),
		tick: time.NewTicker(g.cfg.Interval),
	}
	go g.sample(ctx, st.results)
	g.run(ctx, st, false)
}

// run is the loop proper, on st. The Sampler and the Logger run on
// goroutines of their own, but Config.NowFunc is called here, and may panic
// or end the goroutine (runtime.Goexit): then run's way out, telling that
// from a return, hands st on to fault, which starts a new run. A new run
// that waits for a tick (afterFault) drops the outcome of a sample that
// returns meanwhile, rather than apply it late as fresh; at the tick it
// starts a sample and leaves that tick's sweep to the next.
func (g *Governor) run(ctx context.Context, st *loopState, afterFault bool) {
	returned := false
	defer func() {
		if !returned {
			v := recover()
			p, ok := v.(*PanicError) // NowFunc's, from loopNow
			if v != nil && !ok {
				panic(v) // not NowFunc's: a bug of the Governor's own
			}
			g.fault(ctx, st, p)
			return
		}
		st.end()
	}()
	lateAfter := times(lateIntervals, g.cfg.Interval) // saturated: see times
	for afterFault {
		select {
		case <-st.results:
			st.busy = false // dropped: the tick starts a fresher sample
		case <-st.tick.C:
			g.startSample(ctx, st)
			afterFault = false
		case <-ctx.Done():
			returned = true
			return
		}
	}
	for {
		select {
		case s := <-st.results:
			st.busy = false
			if st.first == nil && ctx.Err() != nil {
				returned = true
				return
			}
			g.apply(s)
			st.late.Reset(lateAfter)
			if st.first != nil {
				close(st.first)
				st.first = nil
			}
		case <-st.tick.C:
			st.faulted = false
			g.startSample(ctx, st) // first, so that a sweep that faults costs the tick no sample
			g.usage.sweep(g.loopNow())
		case <-st.late.C:
			// Armed again while markLate runs, so that if it faults the
			// reading is marked late an Interval on all the same.
			st.late.Reset(g.cfg.Interval)
			g.markLate(lateAfter)
			st.late.Stop()
		case <-ctx.Done():
			returned = true
			return
		}
	}
}

// startSample starts a sample unless one is under way.
func (g *Governor) startSample(ctx context.Context, st *loopState) {
	if !st.busy {
		st.busy = true
		go g.sample(ctx, st.results)
	}
}

// loopNow calls Config.NowFunc for the sampling goroutine. Its panic goes
// on as a *PanicError, which run's way out contains; any other panic there, a
// bug of the Governor's own (which may hold g.mu), is not contained.
func (g *Governor) loopNow() time.Time {
	defer func() {
		if v := recover(); v != nil {
			panic(&PanicError{Value: v, Stack: debug.Stack()})
		}
	}()
	return g.cfg.NowFunc()
}

// fault takes over from a run that a call on its goroutine ended, by a
// panic of NowFunc (p) or, if p is nil, by runtime.Goexit; what the
// call was doing (applying a sample, marking the reading late, sweeping) is
// lost. fault logs it, then starts a new run on st, or ends sampling if
// ctx is done.
//
// If applying the first sample faulted, first is closed: Start returns as
// after a failed first sample, with no reading (stale), and the next sample
// that is applied brings one.
//
// The new run starts at once after the first fault since the loop last took
// a tick in its stride, else at the next tick: a run that faults at every
// turn, as with a NowFunc that always panics, is replaced at most twice
// between two ticks and once a tick while the faults go on, not in a hot
// loop.
func (g *Governor) fault(ctx context.Context, st *loopState, p *PanicError) {
	if st.first != nil && !st.busy { // the first sample has returned, yet first is open: applying it faulted
		close(st.first)
		st.first = nil
	}
	if p != nil {
		g.log(slog.LevelError, "governor: NowFunc panicked on the sampling goroutine", "panic", panicval.String(p.Value), "stack", string(p.Stack))
	} else {
		g.log(slog.LevelError, "governor: a call on the sampling goroutine called runtime.Goexit")
	}
	if ctx.Err() != nil {
		st.end()
		return
	}
	afterFault := st.faulted
	st.faulted = true
	go g.run(ctx, st, afterFault)
}

// end ends sampling: it waits for a sample under way (Stop waits for the
// Sampler to return), then closes first if it is still open (Stop came
// during the first sample) and stopped.
func (st *loopState) end() {
	if st.busy {
		<-st.results
	}
	if st.first != nil {
		close(st.first)
	}
	st.tick.Stop()
	st.late.Stop()
	close(st.stopped)
}

// sample calls the Sampler once and sends the outcome to out: its reading and
// error, a *PanicError if it panicked, or ErrSamplerGoexit if it called
// runtime.Goexit.
func (g *Governor) sample(ctx context.Context, out chan<- sampled) {
	s := sampled{err: ErrSamplerGoexit} // unless Sample returns or panics
	defer func() { out <- s }()
	defer func() {
		if v := recover(); v != nil {
			s = sampled{err: &PanicError{Value: v, Stack: debug.Stack()}}
		}
	}()
	r, err := g.cfg.Sampler.Sample(ctx)
	s = sampled{r, err}
}

// apply takes in the outcome of one sample, updates admission, wakes the
// waiters it admits and logs what an operator should know.
func (g *Governor) apply(s sampled) {
	now := g.loopNow()
	g.mu.Lock()
	err := s.err
	if err == nil {
		err = g.checkReading(s.r)
	}
	wasFailing := g.lastErr != nil
	if err != nil {
		g.stale, g.lastErr = true, err
	} else {
		g.stale, g.lastErr = false, nil
		g.reading, g.sampledAt = s.r, now
		g.judgeLocked(s.r)
		g.memCeil.Store(g.memCeilOf(s.r))
		g.dropInvalidLocked()
	}
	g.updateLocked()
	g.tickedAt = now
	g.phaseLocked(now)
	g.grantLocked()
	g.notifyLocked()
	g.mu.Unlock()

	// Logged outside the lock: a handler may call back into the Governor.
	switch pe, _ := err.(*PanicError); {
	case pe != nil:
		g.log(slog.LevelError, "governor: sampler panicked; reading stale", "panic", panicval.String(pe.Value), "stack", string(pe.Stack))
	case err == ErrSamplerGoexit:
		g.log(slog.LevelError, "governor: sampler called runtime.Goexit; reading stale")
	case err != nil && !wasFailing:
		g.log(slog.LevelWarn, "governor: sample failed; reading stale", "err", err)
	case err == nil && wasFailing:
		g.log(slog.LevelInfo, "governor: sampling recovered")
	}
}

// markLate marks the reading stale because no sample has returned for
// lateAfter, and applies the stale policy.
func (g *Governor) markLate(lateAfter time.Duration) {
	now := g.loopNow()
	g.mu.Lock()
	g.stale, g.lastErr = true, fmt.Errorf("%w: no sample has returned for %v", ErrSamplerLate, lateAfter)
	g.updateLocked()
	g.tickedAt = now
	g.phaseLocked(now)
	g.grantLocked()
	g.notifyLocked()
	g.mu.Unlock()
	g.log(slog.LevelWarn, "governor: sampler late; reading stale", "after", lateAfter)
}

// log hands a record to Config.Logger on a goroutine of its own and waits
// for it, as sample does with the Sampler: a handler that panics (recovered)
// or calls runtime.Goexit loses the record, but does not stop sampling.
//
// Only the sampling goroutine logs: the record is handled under the frame
// forSampling, by which a Stop from the handler knows it is called back
// from sampling (see onSamplingGoroutine).
func (g *Governor) log(level slog.Level, msg string, args ...any) {
	isolate.Call(func() { forSampling(func() { g.cfg.Logger.Log(context.Background(), level, msg, args...) }) })
}

// forSampling calls f. It is the frame of a Logger call that the sampling
// goroutine waits on.
//
//go:noinline
func forSampling(f func()) { f() }

// The names, in stack traces, of the functions under which the Governor
// calls the user's code for the sampling goroutine: run (NowFunc), sample
// (the Sampler) and forSampling (the Logger).
const (
	runFunc         = "github.com/jobkit/jobkit/governor.(*Governor).run"
	sampleFunc      = "github.com/jobkit/jobkit/governor.(*Governor).sample"
	forSamplingFunc = "github.com/jobkit/jobkit/governor.forSampling"
)

// onSamplingGoroutine reports whether the caller is called back from
// sampling: by the Sampler, by NowFunc on the sampling goroutine, or by the
// Logger's handler. Waiting there for sampling to end would wait for the
// caller itself. It walks the stack: Stop alone asks.
func onSamplingGoroutine() bool {
	return stack.Within(func(fn string) bool {
		return fn == runFunc || fn == sampleFunc || fn == forSamplingFunc
	})
}
