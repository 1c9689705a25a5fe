package governor

import (
	"container/list"
	"context"
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
type Weight struct {
	// Slots is how many processing slots the work holds; 0 means 1.
	Slots int
	// Memory is the memory in bytes the work is expected to use.
	Memory uint64
	// CPUPercent is the CPU the work is expected to use, on the scale of
	// Reading.CPUPercent (percent of the CPU available to the process), 0 to 100.
	CPUPercent float64
}

// cost is a validated Weight in the units of the admission atomics.
type cost struct {
	slots, mem, cpu int64
}

// cost returns w in the units of the admission atomics; ok is false if w
// could never be granted.
func (g *Governor) cost(w Weight) (c cost, ok bool) {
	slots := int64(w.Slots)
	if slots == 0 {
		slots = 1
	}
	ok = slots > 0 && slots <= int64(g.cfg.Slots) &&
		w.Memory <= math.MaxInt64 &&
		w.CPUPercent >= 0 && w.CPUPercent <= 100 // false for NaN
	return cost{slots, int64(w.Memory), int64(w.CPUPercent * 1000)}, ok
}

// TryAcquire grants a Permit for w at once, or reports false: when the latest
// reading refuses work (a limit is exceeded, or the reading is stale under
// StaleRefuse, or Stop was called), when w does not fit the free slots or the
// headroom, when w is invalid, or when Acquire calls are waiting (TryAcquire
// does not overtake them). When calls race for the last free slots, all of
// them may report false for a moment. key names the account Permit.Release
// charges the slot-time to; "" charges nothing.
//
// With an empty key TryAcquire only reads and updates atomics: no lock, no
// clock, no allocation. A refusal is one atomic load, about 3ns; a grant and
// its Release cost about 30ns in parallel on two cores
// (BenchmarkGovernor_TryAcquire). A non-empty key adds a clock read and a
// short per-key lock to both.
func (g *Governor) TryAcquire(key string, w Weight) (Permit, bool) {
	c, ok := g.cost(w)
	if !ok || !g.take(c, false) {
		return Permit{}, false
	}
	return g.newPermit(key, c.slots), true
}

// Acquire waits until w can be granted and returns a Permit for it. Waiters
// are granted in the order they arrived: one that does not fit yet holds up
// those behind it. They are woken when a sample shows headroom or a Permit is
// released.
//
// Acquire returns ErrInvalidWeight at once if w could never be granted,
// ErrStopped after Stop, and ctx's error if ctx is done first, holding nothing
// then. key is as for TryAcquire.
func (g *Governor) Acquire(ctx context.Context, key string, w Weight) (Permit, error) {
	c, ok := g.cost(w)
	if !ok {
		return Permit{}, ErrInvalidWeight
	}
	if err := ctx.Err(); err != nil {
		return Permit{}, err
	}
	g.mu.Lock()
	if g.isStopped {
		g.mu.Unlock()
		return Permit{}, ErrStopped
	}
	if g.waiters.Len() == 0 && g.take(c, true) {
		g.mu.Unlock()
		return g.newPermit(key, c.slots), nil
	}
	wt := &waiter{cost: c, ready: make(chan struct{})}
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
			g.unreserve(c)
			g.putSlots(c.slots, true)
			g.grantLocked()
		}
	default:
		front := g.waiters.Front() == elem
		g.dequeueLocked(elem)
		if front { // the next waiter may fit where this one did not
			g.grantLocked()
		}
	}
	g.mu.Unlock()
	return Permit{}, ctx.Err()
}

// take takes c's slots and reserves its memory and CPU, or takes nothing and
// reports false. Unless queued (the caller holds mu to serve the queue), it
// fails while Acquire calls wait.
func (g *Governor) take(c cost, queued bool) bool {
	gate := g.gate.Load()
	if gate&gateRefuse != 0 || (!queued && gate >= gateWaiter) {
		return false
	}
	// One atomic add, undone if it overdraws: cheaper under contention than a
	// load and a compare-and-swap.
	if g.free.Add(-c.slots) >= 0 && (c.mem == 0 && c.cpu == 0 || g.reserve(c)) {
		return true
	}
	g.putSlots(c.slots, queued)
	return false
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

// putSlots returns n slots and, unless queued (the caller holds mu and
// serves the queue), grants them to the waiters if there are any.
func (g *Governor) putSlots(n int64, queued bool) {
	g.free.Add(n)
	if !queued && g.gate.Load() >= gateWaiter {
		g.wake()
	}
}

func (g *Governor) wake() {
	g.mu.Lock()
	g.grantLocked()
	g.mu.Unlock()
}

// grantLocked grants waiters in order for as long as the first one fits.
func (g *Governor) grantLocked() {
	for e := g.waiters.Front(); e != nil; e = g.waiters.Front() {
		if !g.take(e.Value.(*waiter).cost, true) {
			return
		}
		g.dequeueLocked(e).settle(nil)
	}
}

// dequeueLocked removes e from the queue and returns its waiter.
func (g *Governor) dequeueLocked(e *list.Element) *waiter {
	g.waiters.Remove(e)
	g.gate.Add(-gateWaiter)
	return e.Value.(*waiter)
}

// waiter is one blocked Acquire call.
type waiter struct {
	cost  cost
	ready chan struct{} // closed when granted (err nil) or failed
	err   error         // written before ready is closed
}

func (w *waiter) settle(err error) {
	w.err = err
	close(w.ready)
}
