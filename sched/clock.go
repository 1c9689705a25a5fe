package sched

import (
	"log/slog"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/jobkit/jobkit/internal/panicval"
)

// guardedClock is Config.Clock when it is not the default: a panic in the
// clock or in one of its timers (or a nil timer) never takes a scheduling
// loop, a worker, the timekeeper or an Add down with it. The first is
// logged with its stack, and from then on the scheduler tells the time by
// the system clock and its timers run on it; a clock that breaks once is
// not trusted again, so that times from two clocks are never mixed back
// and forth. broke is closed then, so that the scheduler's goroutines that
// wait on a timer of the broken clock (which may never fire again) wake
// and move to the system clock's.
type guardedClock struct {
	c      Clock
	sys    systemClock
	broken atomic.Bool
	broke  chan struct{}
	log    *slog.Logger
}

func newGuardedClock(c Clock, log *slog.Logger) *guardedClock {
	return &guardedClock{c: c, log: log, broke: make(chan struct{})}
}

// fail marks the clock broken by what happened in the method in, and logs
// it the first time.
func (g *guardedClock) fail(in string, what any) {
	if g.broken.CompareAndSwap(false, true) {
		g.log.Error("sched: the clock panicked; the system clock tells the time from now on",
			slog.String("in", in), slog.String("panic", panicval.String(what)), slog.String("stack", string(debug.Stack())))
		close(g.broke)
	}
}

// try calls f, and reports false if it panicked: the clock is broken then.
// If f ends the goroutine (runtime.Goexit), which no deferred call can
// stop, the clock is broken too, so that the goroutine that replaces this
// one (see Scheduler.loop and batch.run) is not ended by it again.
func (g *guardedClock) try(in string, f func()) (ok bool) {
	returned := false
	defer func() {
		if v := recover(); v != nil || !returned {
			ok = false
			g.fail(in, exitValue(v))
		}
	}()
	f()
	returned = true
	return true
}

// Now implements Clock.
func (g *guardedClock) Now() time.Time {
	var t time.Time
	if !g.broken.Load() && g.try("Now", func() { t = g.c.Now() }) {
		return t
	}
	return g.sys.Now()
}

// NewTimer implements Clock.
func (g *guardedClock) NewTimer() Timer {
	t := &guardedTimer{g: g}
	if !g.broken.Load() && g.try("NewTimer", func() { t.t = g.c.NewTimer() }) {
		if t.t != nil {
			return t
		}
		g.fail("NewTimer", "NewTimer returned a nil Timer")
	}
	t.t = nil
	t.sys = g.sys.NewTimer()
	return t
}

// guardedTimer is a timer of a guardedClock. Like every Timer it is used by
// one goroutine at a time. It runs on the clock's timer until the clock
// breaks, then, from its next use, on a system timer armed for what was
// left. It cannot tell whether the clock's timer fired meanwhile, so one
// that was due then fires at once on the system timer: a wakeup too many
// at the break, never one lost.
type guardedTimer struct {
	g   *guardedClock
	t   Timer // the clock's, until it broke
	sys Timer // the system clock's, once it broke
	// due is when the timer was last armed to fire (by the system clock's
	// monotonic reading), so that a timer moved to the system clock fires
	// when it would have; zero when it is not armed.
	due time.Time
}

// current returns the timer to act on: the clock's, or, once the clock is
// broken, the system's, made then and armed as the clock's was.
func (t *guardedTimer) current() Timer {
	if t.sys == nil && t.g.broken.Load() {
		if old := t.t; old != nil {
			t.g.try("Timer.Stop", old.Stop)
		}
		t.t = nil
		t.sys = t.g.sys.NewTimer()
		if !t.due.IsZero() {
			t.sys.Reset(time.Until(t.due))
		}
	}
	if t.sys != nil {
		return t.sys
	}
	return t.t
}

// do calls f with the timer to act on; if the clock's timer panics, the
// clock is broken then, and f acts on the system timer that replaces it.
func (t *guardedTimer) do(in string, f func(Timer)) {
	if cur := t.current(); cur == t.sys || !t.g.try(in, func() { f(cur) }) {
		f(t.current())
	}
}

// C implements Timer.
func (t *guardedTimer) C() <-chan time.Time {
	var c <-chan time.Time
	t.do("Timer.C", func(x Timer) { c = x.C() })
	return c
}

// Reset implements Timer.
func (t *guardedTimer) Reset(d time.Duration) {
	t.due = time.Now().Add(d)
	t.do("Timer.Reset", func(x Timer) { x.Reset(d) })
}

// Stop implements Timer.
func (t *guardedTimer) Stop() {
	t.due = time.Time{}
	t.do("Timer.Stop", Timer.Stop)
}
