package governor

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
)

// Weight is what one unit of work asks of the Governor. The zero Weight asks
// for one slot and nothing more.
//
// Memory and CPUPercent are estimates of what the work will add before the
// next sample shows it: each grant reserves them from the headroom of the
// latest reading (below the memory and CPU limits), and the next sample
// replaces all reservations with its own figures. Releasing a Permit returns
// its slots, not its reservations.
//
// A Weight is invalid, and never granted, if it asks for a negative amount,
// NaN, more slots than the Governor has, more CPU than Config.MaxCPUPercent
// allows, or more memory than the limits would leave under the latest
// reading's memory limit even if nothing were in use: MemoryLimit ×
// MaxMemoryPercent, and MemoryLimit − MinAvailableMemory.
type Weight struct {
	// Slots is how many processing slots the work holds; 0 means 1.
	Slots int
	// Memory is the memory in bytes the work is expected to use. It is not
	// checked while the reading has no memory figures (MemoryLimit 0) or is
	// stale under StaleAdmit.
	Memory uint64
	// CPUPercent is the CPU the work is expected to use, on the scale of
	// Reading.CPUPercent (percent of the CPU available to the process), 0 to
	// Config.MaxCPUPercent. While Config.MaxCPUPercent is 100 (off) it may be
	// up to 100 and is not checked against the reading.
	CPUPercent float64
}

// cost is a validated Weight in the units of the admission atomics.
type cost struct {
	slots, mem, cpu int64
}

// cost returns w in the units of the admission atomics; ok is false if w is
// invalid.
func (g *Governor) cost(w Weight) (c cost, ok bool) {
	slots := int64(w.Slots)
	if slots == 0 {
		slots = 1
	}
	ok = slots > 0 && slots <= int64(g.cfg.Slots) &&
		w.CPUPercent >= 0 && w.CPUPercent <= g.cfg.MaxCPUPercent && // false for NaN
		(w.Memory == 0 || w.Memory <= uint64(g.memCeil.Load()))
	c = cost{slots: slots, mem: int64(w.Memory)}
	if g.cfg.MaxCPUPercent < 100 {
		c.cpu = int64(w.CPUPercent * 1000)
	}
	return c, ok
}

// invalidWeight returns an error wrapping ErrInvalidWeight that says why w
// is invalid.
func (g *Governor) invalidWeight(w Weight) error {
	switch ceil := uint64(g.memCeil.Load()); {
	case w.Slots < 0 || w.Slots > g.cfg.Slots:
		return fmt.Errorf("%w: %d slots of %d", ErrInvalidWeight, w.Slots, g.cfg.Slots)
	case !(w.CPUPercent >= 0 && w.CPUPercent <= g.cfg.MaxCPUPercent):
		return fmt.Errorf("%w: CPUPercent %v is not in [0, MaxCPUPercent %v]", ErrInvalidWeight, w.CPUPercent, g.cfg.MaxCPUPercent)
	default:
		return fmt.Errorf("%w: Memory %s is more than the limits allow (%s)", ErrInvalidWeight, bytesString(w.Memory), bytesString(ceil))
	}
}

// TryAcquire grants a Permit for w at once, or reports false: when the latest
// reading refuses work (a limit is exceeded, or the reading is stale under
// StaleRefuse, or Stop was called), when w does not fit the free slots or the
// headroom, when w is invalid (see Weight), or when a blocked Acquire holds
// up later work (see Acquire). When calls race for the last free slots, all
// of them may report false for a moment. key names the account
// Permit.Release charges the slot-time to; "" charges nothing.
//
// With an empty key TryAcquire only reads and updates atomics: no lock, no
// clock, no allocation. A refusal is one atomic load. A grant of the zero
// Weight and its Release are one compare-and-swap each on the record the
// goroutine maps to, which keeps its slot between grants: a goroutine that
// acquires and releases again writes nothing shared with other goroutines. A non-empty key adds a clock read
// and a short per-key lock to both. Figures, against
// golang.org/x/sync/semaphore, a channel and a mutex in the same run
// (BenchmarkGovernor_TryAcquire, BenchmarkGovernor_TryAcquireRelease):
// bench/RESULTS.md in the repository, section 6.4.
func (g *Governor) TryAcquire(key string, w Weight) (Permit, bool) {
	if g.gate.Load()&(gateRefuse|gateHold) != 0 {
		return Permit{}, false
	}
	if key != "" || w != (Weight{}) {
		return g.tryAcquire(key, w)
	}
	// The common case, the zero Weight without a key: claim the goroutine's
	// record of the table and take the slot it keeps, if it does (permit).
	t := g.table
	if t == nil { // not made by New: no slots
		return Permit{}, false
	}
	r := &t[permitIndex()].permit
	s := r.state.Load()
	if s&(permitLive|permitCached) == permitCached && r.state.CompareAndSwap(s, claimed(s)) {
		return Permit{p: r, state: claimed(s), slots: 1}, true
	}
	return g.tryAcquireOne(r, s)
}

// tryAcquire is TryAcquire for any key and Weight.
func (g *Governor) tryAcquire(key string, w Weight) (Permit, bool) {
	c, ok := g.cost(w)
	if !ok || !g.take(c) {
		return Permit{}, false
	}
	return g.newPermit(key, c.slots), true
}

// Acquire waits until w can be granted and returns a Permit for it. Waiters
// are served in the order they arrived, with one exception that keeps a
// waiter from holding up the others indefinitely:
//
//   - A waiter short of slots holds up those behind it, and TryAcquire, until
//     Permits are released, as in a semaphore.
//   - A waiter short of room (its Memory or CPUPercent exceeds what the
//     latest reading leaves) holds them up for Config.MaxHold, so that
//     running work can finish and make room. If it still does not fit, it
//     lets work that fits pass for as long again, then holds again, and so on
//     until it is granted. Neither it nor the work behind it waits for longer
//     than MaxHold at a time (to within one Config.Interval).
//
// Waiters are woken when a sample shows headroom or a Permit is released.
//
// Acquire returns an error wrapping ErrInvalidWeight at once if w is invalid
// (see Weight), and fails a waiter with such an error when a sample lowers
// the memory limit so that w becomes invalid. It returns ErrStopped after
// Stop, and ctx's error if ctx is done first, holding nothing then. key is
// as for TryAcquire.
func (g *Governor) Acquire(ctx context.Context, key string, w Weight) (Permit, error) {
	if g.table == nil {
		return Permit{}, errNotMade
	}
	if ctx == nil {
		return Permit{}, errNilCtx
	}
	c, ok := g.cost(w)
	if !ok {
		return Permit{}, g.invalidWeight(w)
	}
	if err := ctx.Err(); err != nil {
		return Permit{}, err
	}
	g.mu.Lock()
	switch {
	case g.isStopped:
		g.mu.Unlock()
		return Permit{}, ErrStopped
	case c.mem > g.memCeil.Load(): // a sample lowered the limit meanwhile
		g.mu.Unlock()
		return Permit{}, g.invalidWeight(w)
	case !g.holding && g.takeLocked(c) == fitOK:
		g.mu.Unlock()
		return g.newPermit(key, c.slots), nil
	}
	wt := &waiter{cost: c, ready: make(chan struct{}), since: g.tickedAt, holding: true}
	elem := g.waiters.PushBack(wt)
	g.gate.Add(gateWaiter)
	g.grantLocked() // a slot may have been released before the waiter was counted
	g.mu.Unlock()

	select {
	case <-wt.ready:
		if wt.err != nil {
			return Permit{}, wt.err
		}
		return g.newPermit(key, c.slots), nil
	case <-ctx.Done():
	}

	g.mu.Lock()
	select {
	case <-wt.ready: // settled meanwhile
		if wt.err == nil { // granted: hand it on
			// Its reservation goes back unless a sample (or Stop) has
			// set the rooms afresh since the grant: they no longer hold
			// it, and giving it back would count it twice.
			if wt.roomsGen == g.roomsGen {
				g.unreserve(c)
			}
			g.free.Add(c.slots)
			g.grantLocked()
			g.notifyLocked()
		}
	default:
		held := g.holding
		g.dequeueLocked(elem)
		g.grantLocked()         // those behind may fit where this one did not
		if held && !g.holding { // TryAcquire may admit again: tell the watchers
			g.notifyLocked()
		}
	}
	g.mu.Unlock()
	return Permit{}, ctx.Err()
}

// take takes c's slots and reserves its memory and CPU, or takes nothing and
// reports false. It fails while the reading refuses work or a waiter holds
// up later work.
func (g *Governor) take(c cost) bool {
	if g.gate.Load()&(gateRefuse|gateHold) != 0 {
		return false
	}
	// One atomic add, undone if it overdraws: cheaper under contention than a
	// load and a compare-and-swap. Short of slots, it tries again once with
	// the slots that records keep.
	for retry := false; ; retry = true {
		if g.free.Add(-c.slots) >= 0 {
			if c.mem == 0 && c.cpu == 0 || g.reserve(c) {
				return true
			}
			g.putSlots(c.slots)
			return false
		}
		g.putSlots(c.slots)
		if retry || !g.flushCached() {
			return false
		}
		if g.gate.Load() >= gateWaiter { // some of the slots may serve them
			g.wake()
		}
	}
}

// reserve reserves c's memory and CPU from the rooms, or nothing.
func (g *Governor) reserve(c cost) bool {
	if !reserveFrom(&g.memRoom, c.mem) {
		return false
	}
	if !reserveFrom(&g.cpuRoom, c.cpu) {
		g.unreserve(cost{mem: c.mem})
		return false
	}
	return true
}

// unreserve returns c's memory and CPU to the rooms.
func (g *Governor) unreserve(c cost) {
	unreserveTo(&g.memRoom, c.mem)
	unreserveTo(&g.cpuRoom, c.cpu)
}

// reserveFrom subtracts n from room if room holds at least n.
func reserveFrom(room *atomic.Int64, n int64) bool {
	for n > 0 {
		v := room.Load()
		if v < n {
			return false
		}
		if room.CompareAndSwap(v, v-n) {
			break
		}
	}
	return true
}

// unreserveTo adds n back to room. It saturates: a sample may have reset room
// to "unlimited" (math.MaxInt64) since n was reserved.
func unreserveTo(room *atomic.Int64, n int64) {
	for n > 0 {
		v := room.Load()
		nv := int64(math.MaxInt64)
		if v <= math.MaxInt64-n {
			nv = v + n
		}
		if room.CompareAndSwap(v, nv) {
			return
		}
	}
}

// putSlots returns n slots and grants them to the waiters if there are any,
// and closes the channel of Changed if one is out. The caller must not hold
// mu.
func (g *Governor) putSlots(n int64) {
	g.free.Add(n)
	if g.gate.Load() >= gateWatch {
		g.wake()
	}
}

// wake grants released slots to the waiters and tells the watchers.
func (g *Governor) wake() {
	g.mu.Lock()
	g.grantLocked()
	g.notifyLocked()
	g.mu.Unlock()
}
