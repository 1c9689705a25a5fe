package governor

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"
)

// lateIntervals is how many intervals a reading may go without a returned
// sample before it is stale.
const lateIntervals = 2

// sampled is the outcome of one call of the Sampler.
type sampled struct {
	r   Reading
	err error
}

// loop runs the sampling: it calls the Sampler at once, closes first when
// that call has been applied, and calls it again on every tick of the
// interval while no call is under way. Each call runs on a goroutine of its
// own (sample), so that the loop can mark the reading stale while a call
// hangs. When ctx is cancelled, the loop waits for a call under way to
// return, then closes stopped.
func (g *Governor) loop(ctx context.Context, first, stopped chan struct{}) {
	defer close(stopped)
	defer func() {
		if first != nil { // stopped during the first sample
			close(first)
		}
	}()
	lateAfter := lateIntervals * g.cfg.Interval
	late := time.NewTimer(lateAfter)
	defer late.Stop()
	tick := time.NewTicker(g.cfg.Interval)
	defer tick.Stop()
	results := make(chan sampled, 1)
	go g.sample(ctx, results)
	busy := true
	for {
		select {
		case s := <-results:
			busy = false
			if first == nil && ctx.Err() != nil {
				return
			}
			g.apply(s)
			late.Reset(lateAfter)
			if first != nil {
				close(first)
				first = nil
			}
		case <-tick.C:
			g.usage.sweep()
			if !busy {
				busy = true
				go g.sample(ctx, results)
			}
		case <-late.C:
			g.markLate(lateAfter)
		case <-ctx.Done():
			if busy {
				<-results // Stop waits for the Sampler to return
			}
			return
		}
	}
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
	now := g.cfg.NowFunc()
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
		g.log(slog.LevelError, "governor: sampler panicked; reading stale", "panic", fmt.Sprint(pe.Value), "stack", string(pe.Stack))
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
	now := g.cfg.NowFunc()
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

// log hands a record to Config.Logger. A panic in its handler is recovered
// and the record dropped: a broken logger does not stop sampling.
func (g *Governor) log(level slog.Level, msg string, args ...any) {
	defer func() { _ = recover() }()
	g.cfg.Logger.Log(context.Background(), level, msg, args...)
}
