package props

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"github.com/jobkit/jobkit/governor"
)

// govInterval is the sampling interval of TestGovernorMatchesModel.
const govInterval = time.Second

// govSampler returns the reading (or error) the test set last.
type govSampler struct {
	mu  sync.Mutex
	r   governor.Reading
	err error
}

func (s *govSampler) Sample(context.Context) (governor.Reading, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.r, s.err
}

func (s *govSampler) set(r governor.Reading, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.r, s.err = r, err
}

// gcost is a Weight in the units the model counts: slots, bytes and
// thousandths of a percentage point of CPU.
type gcost struct{ slots, mem, cpu int64 }

// gwaiter is a blocked Acquire, in the model and in the test.
type gwaiter struct {
	id     int
	w      governor.Weight
	key    string
	c      gcost
	cancel context.CancelFunc
	done   chan gresult // the real Acquire's outcome

	// The model: the waiter's holding phase (see Config.MaxHold).
	since   time.Time
	phase   int64
	holding bool
}

type gresult struct {
	p   governor.Permit
	err error
}

// gpermit is a granted Permit and what the model knows of it.
type gpermit struct {
	p        governor.Permit
	key      string
	slots    int64
	at, end  time.Time // end is zero while held
	released bool
}

// gmodelState is the reference: the Governor's configuration, its latest
// reading's verdicts (with hysteresis), the rooms left for Weights until
// the next sample, the free slots and the queue of waiters.
type gmodelState struct {
	slots                       int64
	maxCPU, maxMem              int64 // percent; 100 is off
	minAvail                    int64 // bytes
	h10                         int64 // hysteresis in tenths
	refuseStale                 bool
	maxHold                     time.Duration
	free                        int64
	stale, stopped              bool
	cpuOver, memOver, availOver bool
	memRoom, cpuRoom            int64
	memCeil                     int64
	hold                        bool
	lastTick                    time.Time
	waiters                     []*gwaiter
	settled                     map[int]error // waiters the model has settled since the last check: nil for granted
}

// greading is a sample as the model draws it: CPU percent, memory used,
// available and the limit, or a failure.
type greading struct {
	fail      int // 0 ok, 1 the Sampler's error, 2 an invalid CPU figure
	cpu       int64
	used, lim int64
	avail     int64
}

func (m *gmodelState) refusing() bool {
	switch {
	case m.stopped:
		return true
	case m.stale:
		return m.refuseStale
	}
	return m.cpuOver || m.memOver || m.availOver
}

// cost returns w in the model's units and whether w is valid (see Weight).
func (m *gmodelState) cost(w governor.Weight) (gcost, bool) {
	s := int64(w.Slots)
	if s == 0 {
		s = 1
	}
	ok := s > 0 && s <= m.slots &&
		w.CPUPercent >= 0 && w.CPUPercent <= float64(m.maxCPU) &&
		(w.Memory == 0 || w.Memory <= uint64(m.memCeil))
	c := gcost{slots: s, mem: int64(w.Memory)}
	if m.maxCPU < 100 && ok {
		c.cpu = int64(w.CPUPercent) * 1000
	}
	return c, ok
}

// fit is the Governor's takeLocked: why c does not fit, or "" having taken it.
func (m *gmodelState) fit(c gcost) string {
	switch {
	case m.refusing():
		return "refused"
	case m.memRoom < c.mem || m.cpuRoom < c.cpu:
		return "room"
	case m.free < c.slots:
		return "slots"
	}
	m.take(c)
	return ""
}

func (m *gmodelState) take(c gcost) {
	m.free -= c.slots
	m.memRoom -= c.mem
	m.cpuRoom -= c.cpu
}

// grant serves the queue in order: a waiter that fits is granted; one short
// of room holds up those behind it while in a holding phase, and is passed
// over otherwise; one short of slots (or refused) holds them up.
func (m *gmodelState) grant() {
	hold := false
	var rest []*gwaiter
	for i, w := range m.waiters {
		if hold {
			rest = append(rest, m.waiters[i:]...)
			break
		}
		switch m.fit(w.c) {
		case "":
			m.settled[w.id] = nil
		case "room":
			hold = w.holding
			rest = append(rest, w)
		default:
			hold = true
			rest = append(rest, w)
		}
	}
	m.waiters = rest
	m.hold = hold
}

// wm returns pct lowered by the hysteresis: the watermark at which a crossed
// percentage limit clears.
func (m *gmodelState) wm(pct int64) int64 { return pct * (10 - m.h10) / 10 }

// apply takes in a sample at now, as the sampling goroutine does.
func (m *gmodelState) apply(r greading, now time.Time) {
	if m.stopped {
		return
	}
	if r.fail != 0 || (r.lim > 0 && m.minAvail >= r.lim) {
		m.stale = true
	} else {
		m.stale = false
		over := m.cpuOver
		m.cpuOver = m.maxCPU < 100 && r.cpu > pickI(over, m.wm(m.maxCPU), m.maxCPU)
		m.memCeil = math.MaxInt64
		if r.lim == 0 {
			m.memOver, m.availOver = false, false
		} else {
			pct := pickI(m.memOver, m.wm(m.maxMem), m.maxMem)
			m.memOver = m.maxMem < 100 && r.used*100 > r.lim*pct
			availWM := min(m.minAvail*(10+m.h10)/10, m.minAvail+(r.lim-m.minAvail)/2)
			m.availOver = r.avail < pickI(m.availOver, availWM, m.minAvail)
			m.memCeil = r.lim - m.minAvail
			if m.maxMem < 100 {
				m.memCeil = min(m.memCeil, r.lim*m.maxMem/100)
			}
		}
		// Waiters whose memory no longer fits the limits fail.
		var rest []*gwaiter
		for _, w := range m.waiters {
			if w.c.mem > m.memCeil {
				m.settled[w.id] = governor.ErrInvalidWeight
				continue
			}
			rest = append(rest, w)
		}
		m.waiters = rest
	}
	m.memRoom, m.cpuRoom = math.MaxInt64, math.MaxInt64
	if !m.stale {
		if m.maxCPU < 100 {
			m.cpuRoom = (m.maxCPU - r.cpu) * 1000
		}
		if r.lim > 0 {
			m.memRoom = r.avail - m.minAvail
			if m.maxMem < 100 {
				m.memRoom = min(m.memRoom, r.lim*m.maxMem/100-r.used)
			}
		}
	}
	m.lastTick = now
	for _, w := range m.waiters {
		if k := int64(now.Sub(w.since) / m.maxHold); k > w.phase {
			w.phase, w.holding = k, !w.holding
		}
	}
	m.grant()
}

func pickI(cond bool, yes, no int64) int64 {
	if cond {
		return yes
	}
	return no
}

// TestGovernorMatchesModel drives a Governor, in a synctest bubble with a
// fake Sampler and the bubble's clock, through random samples (good ones
// near and across the limits, failed and invalid ones), TryAcquire and
// blocking Acquire calls of random Weights and keys (valid or not),
// cancellations, Releases (first, repeated, or of a stale copy), the
// passing of time and Stop, and compares it after every step with a model:
//
//   - admission: the limits with hysteresis (a crossed limit clears only at
//     its watermark), the stale policy after a failed sample, Stop;
//   - TryAcquire grants iff the reading admits, no waiter holds up later
//     work, the Weight is valid, its slots are free and its memory and CPU
//     fit the rooms the latest reading leaves less what was reserved since;
//     an invalid Weight is refused, by Acquire with ErrInvalidWeight;
//   - Acquire: waiters are granted in arrival order as slots and room
//     appear, one short of room holding up those behind it for MaxHold
//     and letting them pass for as long again, phase after phase; one that
//     a lower memory limit makes invalid fails with ErrInvalidWeight; a
//     cancelled one returns the context's error and holds nothing; Stop
//     fails the rest with ErrStopped;
//   - Release frees a Permit's slots once, whatever the copy;
//   - Snapshot's Stale, Admitting, CPUOver, MemoryOver, SlotsInUse and
//     Waiting, and Usage of each key (slots × time held, exactly, as the
//     window is longer than any run).
func TestGovernorMatchesModel(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(rt *rapid.T) {
		rapid.SyncTest(rt, runGovernorModel)
	})
}

func runGovernorModel(rt *rapid.T) {
	h10 := rapid.SampledFrom([]int64{0, 1, 5}).Draw(rt, "hysteresis10")
	m := &gmodelState{
		slots:       int64(rapid.IntRange(1, 4).Draw(rt, "slots")),
		maxCPU:      rapid.SampledFrom([]int64{50, 80, 100}).Draw(rt, "maxCPU"),
		maxMem:      rapid.SampledFrom([]int64{50, 90, 100}).Draw(rt, "maxMem"),
		minAvail:    rapid.SampledFrom([]int64{0, 100, 300, 800}).Draw(rt, "minAvail"),
		h10:         h10,
		refuseStale: rapid.Bool().Draw(rt, "refuseStale"),
		maxHold:     rapid.SampledFrom([]time.Duration{govInterval, 3 * govInterval / 2, 2 * govInterval, time.Hour}).Draw(rt, "maxHold"),
		stale:       true,
		memCeil:     math.MaxInt64,
		memRoom:     math.MaxInt64,
		cpuRoom:     math.MaxInt64,
		settled:     map[int]error{},
	}
	m.free = m.slots
	hyst := map[int64]float64{0: -1, 1: 0.1, 5: 0.5}[h10]
	if h10 == 1 && rapid.Bool().Draw(rt, "defaultHysteresis") {
		hyst = 0
	}
	policy := governor.StaleAdmit
	if m.refuseStale {
		policy = governor.StaleRefuse
	}
	sampler := &govSampler{}
	g, err := governor.New(governor.Config{
		MaxCPUPercent:      float64(m.maxCPU),
		MaxMemoryPercent:   float64(m.maxMem),
		MinAvailableMemory: uint64(m.minAvail),
		Hysteresis:         hyst,
		Slots:              int(m.slots),
		Interval:           govInterval,
		MaxHold:            m.maxHold,
		Sampler:            sampler,
		StalePolicy:        policy,
		UsageWindow:        time.Hour, // longer than any run: Usage is exact
		Logger:             slog.New(slog.DiscardHandler),
	})
	if err != nil {
		rt.Fatal(err)
	}

	drawReading := func(label string) greading {
		var r greading
		switch rapid.IntRange(0, 9).Draw(rt, label+"Fail") {
		case 0:
			r.fail = 1
		case 1:
			r.fail = 2
		}
		r.cpu = int64(rapid.IntRange(0, 100).Draw(rt, label+"CPU"))
		r.lim = rapid.SampledFrom([]int64{0, 500, 1000, 1000, 2000}).Draw(rt, label+"Limit")
		if r.lim > 0 {
			r.used = 10 * int64(rapid.IntRange(0, int(r.lim/10)).Draw(rt, label+"Used"))
			r.avail = r.lim - r.used
		}
		return r
	}
	set := func(r greading) {
		rd := governor.Reading{CPUPercent: float64(r.cpu), CPUCores: 2,
			MemoryUsed: uint64(r.used), MemoryAvailable: uint64(r.avail), MemoryLimit: uint64(r.lim)}
		var err error
		switch r.fail {
		case 1:
			err = errors.New("sampler failed")
		case 2:
			rd.CPUPercent = 101
		}
		sampler.set(rd, err)
	}

	first := drawReading("first")
	set(first)
	t0 := time.Now()
	if err := g.Start(context.Background()); err != nil {
		rt.Fatal(err)
	}
	m.apply(first, t0)
	nextTick := t0.Add(govInterval)

	var (
		permits []*gpermit
		waiting []*gwaiter // real Acquire calls whose outcome is still to come
		nextID  int
	)
	defer func() {
		// Nothing may be left in the bubble: stop, which fails every
		// waiter, and collect them.
		_ = g.Stop(context.Background())
		for _, w := range waiting {
			w.cancel()
			if r := <-w.done; r.err == nil {
				r.p.Release()
			}
		}
	}()

	weight := func() governor.Weight {
		return governor.Weight{
			Slots:      rapid.SampledFrom([]int{0, 0, 1, 2, 3, -1, 5}).Draw(rt, "wSlots"),
			Memory:     rapid.SampledFrom([]uint64{0, 0, 0, 100, 200, 400, 900, 1500, math.MaxUint64}).Draw(rt, "wMem"),
			CPUPercent: rapid.SampledFrom([]float64{0, 0, 0, 10, 30, 50, 80, 100, -1, math.NaN()}).Draw(rt, "wCPU"),
		}
	}
	key := rapid.SampledFrom([]string{"", "a", "b"})

	// check compares the Governor with the model once the bubble is idle.
	check := func() {
		synctest.Wait()
		now := time.Now()
		// The outcomes of Acquire calls.
		var still []*gwaiter
		for _, w := range waiting {
			want, settled := m.settled[w.id]
			select {
			case r := <-w.done:
				switch {
				case !settled:
					rt.Fatalf("Acquire %d (%+v) returned %v; the model has it waiting", w.id, w.w, r.err)
				case want == nil && r.err != nil:
					rt.Fatalf("Acquire %d (%+v) returned %v; the model granted it", w.id, w.w, r.err)
				case want != nil && !errors.Is(r.err, want):
					r.p.Release()
					rt.Fatalf("Acquire %d (%+v) returned %v, want %v", w.id, w.w, r.err, want)
				}
				delete(m.settled, w.id)
				if r.err == nil {
					permits = append(permits, &gpermit{p: r.p, key: w.key, slots: w.c.slots, at: now})
				}
			default:
				if settled {
					rt.Fatalf("Acquire %d (%+v) still waits; the model settled it with %v", w.id, w.w, want)
				}
				still = append(still, w)
			}
		}
		waiting = still
		held := int64(0)
		for _, p := range permits {
			if !p.released {
				held += p.slots
			}
		}
		if held+m.free != m.slots {
			rt.Fatalf("model: %d slots held, %d free of %d", held, m.free, m.slots)
		}
		s := g.Snapshot()
		switch {
		case s.Stale != m.stale:
			rt.Fatalf("Snapshot.Stale = %v, model %v (%v)", s.Stale, m.stale, s)
		case s.Admitting != !m.refusing():
			rt.Fatalf("Snapshot.Admitting = %v, model %v (%v)", s.Admitting, !m.refusing(), s)
		case s.CPUOver != m.cpuOver:
			rt.Fatalf("Snapshot.CPUOver = %v, model %v (%v)", s.CPUOver, m.cpuOver, s)
		case s.MemoryOver != (m.memOver || m.availOver):
			rt.Fatalf("Snapshot.MemoryOver = %v, model %v (%v)", s.MemoryOver, m.memOver || m.availOver, s)
		case int64(s.SlotsInUse) != held || s.Slots != int(m.slots):
			rt.Fatalf("Snapshot slots %d/%d, model %d/%d", s.SlotsInUse, s.Slots, held, m.slots)
		case s.Waiting != len(m.waiters):
			rt.Fatalf("Snapshot.Waiting = %d, model %d", s.Waiting, len(m.waiters))
		}
		for _, k := range []string{"", "a", "b"} {
			var want time.Duration
			for _, p := range permits {
				if k == "" || p.key != k {
					continue
				}
				end := p.end
				if !p.released {
					end = now
				}
				want += time.Duration(p.slots) * end.Sub(p.at)
			}
			if got := g.Usage(k); got != want {
				rt.Fatalf("Usage(%q) = %v, model %v", k, got, want)
			}
		}
	}

	release := func(p *gpermit) {
		p.p.Release()
		if p.released {
			return
		}
		p.released, p.end = true, time.Now()
		m.free += p.slots
		if len(m.waiters) > 0 {
			m.grant()
		}
	}

	rt.Repeat(map[string]func(*rapid.T){
		"TryAcquire": func(rt *rapid.T) {
			w, k := weight(), key.Draw(rt, "key")
			p, ok := g.TryAcquire(k, w)
			c, valid := m.cost(w)
			want := valid && !m.refusing() && !m.hold && m.free >= c.slots &&
				(c.mem == 0 || m.memRoom >= c.mem) && (c.cpu == 0 || m.cpuRoom >= c.cpu)
			if ok != want {
				p.Release()
				rt.Fatalf("TryAcquire(%q, %+v) = %v, model %v (valid %v, refusing %v, hold %v, free %d, rooms %d/%d)",
					k, w, ok, want, valid, m.refusing(), m.hold, m.free, m.memRoom, m.cpuRoom)
			}
			if ok {
				m.take(c)
				permits = append(permits, &gpermit{p: p, key: k, slots: c.slots, at: time.Now()})
			}
		},
		"Acquire": func(rt *rapid.T) {
			w, k := weight(), key.Draw(rt, "key")
			c, valid := m.cost(w)
			ctx, cancel := context.WithCancel(context.Background())
			aw := &gwaiter{id: nextID, w: w, key: k, c: c, cancel: cancel, done: make(chan gresult, 1),
				since: m.lastTick, holding: true}
			nextID++
			go func() {
				p, err := g.Acquire(ctx, k, w)
				aw.done <- gresult{p, err}
			}()
			waiting = append(waiting, aw)
			switch {
			case !valid:
				m.settled[aw.id] = governor.ErrInvalidWeight
			case m.stopped:
				m.settled[aw.id] = governor.ErrStopped
			case !m.hold && m.fit(c) == "":
				m.settled[aw.id] = nil
			default:
				m.waiters = append(m.waiters, aw)
				m.grant()
			}
		},
		"Cancel": func(rt *rapid.T) {
			if len(m.waiters) == 0 {
				rt.Skip("no waiter")
			}
			w := m.waiters[rapid.IntRange(0, len(m.waiters)-1).Draw(rt, "waiter")]
			w.cancel()
			for i, x := range m.waiters {
				if x == w {
					m.waiters = append(m.waiters[:i:i], m.waiters[i+1:]...)
					break
				}
			}
			m.settled[w.id] = context.Canceled
			m.grant()
		},
		"Release": func(rt *rapid.T) {
			if len(permits) == 0 {
				rt.Skip("no permit")
			}
			release(permits[rapid.IntRange(0, len(permits)-1).Draw(rt, "permit")])
		},
		"Sample": func(rt *rapid.T) {
			r := drawReading("")
			set(r)
			time.Sleep(time.Until(nextTick))
			synctest.Wait()
			m.apply(r, nextTick)
			nextTick = nextTick.Add(govInterval)
		},
		"Elapse": func(rt *rapid.T) {
			left := time.Until(nextTick)
			if left <= 2*time.Millisecond {
				rt.Skip("a tick is due")
			}
			time.Sleep(time.Duration(rapid.Int64Range(1, int64(left/time.Millisecond)-1).Draw(rt, "ms")) * time.Millisecond)
		},
		"Stop": func(rt *rapid.T) {
			if rapid.IntRange(0, 9).Draw(rt, "stopSoon") != 0 {
				rt.Skip("not yet")
			}
			if err := g.Stop(context.Background()); err != nil {
				rt.Fatal(err)
			}
			if !m.stopped {
				m.stopped = true
				for _, w := range m.waiters {
					m.settled[w.id] = governor.ErrStopped
				}
				m.waiters, m.hold = nil, false
			}
		},
		"": func(rt *rapid.T) { check() },
	})
}
