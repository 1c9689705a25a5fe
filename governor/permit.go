package governor

import (
	"math/bits"
	"sync/atomic"
	"unsafe"
)

// Permit is the right to run one unit of work, granted by TryAcquire or
// Acquire. Release returns its slots and charges the time they were held to
// its key.
//
// A Permit is a small value: it may be copied, and Release may be called on
// any copy, from any goroutine, any number of times; only the first call has
// an effect, and a copy kept from an earlier grant never releases a later
// one. The zero Permit is valid and releases nothing.
type Permit struct {
	p     *permit
	acct  *account // nil when the key is ""
	state uint64   // p.state while this grant is live
	slots int64
}

// permit is the record behind a Permit, reused from grant to grant. Its
// state holds permitLive while a grant holds it and a generation that every
// claim moves on, so that only the first Release of a grant, on any copy of
// its Permit, matches it (a compare-and-swap); the generation has 62 bits
// and does not wrap.
//
// Records live in a table of the Governor, one cache line each. A grant
// first tries the record its goroutine maps to (permitIndex), so that a
// goroutine that acquires and releases keeps using one record, in its own
// cache, without the cost of a sync.Pool; when that record and the next few
// are held, the grant takes a record from a sync.Pool instead.
//
// A record of the table may also keep the slot of a released one-slot grant
// (permitCached) instead of returning it to the shared counter, Governor.free:
// the next grant that claims the record takes it over, so that a goroutine
// that acquires and releases one slot again and again writes nothing shared.
// A cached slot is free: whatever finds the counter short of slots
// (stealCached, flushCached) and Snapshot count it, and a Release that finds
// Acquire calls waiting, or a channel of Changed out, returns its slot to the
// counter instead.
type permit struct {
	state  atomic.Uint64
	g      *Governor // set at creation, never changed
	idx    uint8     // index in the table; never changed
	pooled bool      // from Governor.pool rather than its table; never changed
}

// The bits of permit.state.
const (
	permitLive   = 1 // a grant holds the record
	permitCached = 2 // the record keeps one free slot; never while live
	permitGen    = 4 // the generation counts from this bit up
)

// claimed returns the state of a record claimed from state s: the next
// generation, live, no cached slot.
func claimed(s uint64) uint64 { return s&^(permitGen-1) + permitGen | permitLive }

const (
	permitTableBits = 6
	permitTableSize = 1 << permitTableBits
	permitProbes    = 4 // records tried in the table before the pool
)

// permitTable is the Governor's table of records. At 4KiB it is allocated on
// a 4KiB boundary, so each record has a cache line of its own.
type permitTable [permitTableSize]struct {
	permit
	_ [64 - unsafe.Sizeof(permit{})]byte
}

func newPermitTable(g *Governor) *permitTable {
	t := new(permitTable)
	for i := range t {
		t[i].g, t[i].idx = g, uint8(i)
	}
	return t
}

// permitIndex returns an index into the table that is the same for every
// call from one goroutine at one call depth and differs between goroutines:
// a hash of the address of a local variable, which lies in the goroutine's
// stack. It is only a hint for spreading goroutines over the table; a stack
// that moves merely changes it.
func permitIndex() uint64 {
	var local byte
	return uint64(uintptr(unsafe.Pointer(&local))>>4) * 0x9E3779B97F4A7C15 >> (64 - permitTableBits)
}

// tryAcquireOne is TryAcquire of the zero Weight without a key, once the
// gate has let it through, when the goroutine's record r (last seen in state
// s) keeps no slot. It claims r, or another record, and takes a slot from the
// counter, or one kept by another record.
func (g *Governor) tryAcquireOne(r *permit, s uint64) (Permit, bool) {
	if s&permitLive != 0 || !r.state.CompareAndSwap(s, claimed(s)) {
		c, _ := g.cost(Weight{})
		if !g.take(c) {
			return Permit{}, false
		}
		return g.newPermit("", 1), true
	}
	if s&permitCached == 0 && !g.takeOne() {
		r.state.Store(claimed(s) &^ permitLive) // nobody else writes a live record
		return Permit{}, false
	}
	return Permit{p: r, state: claimed(s), slots: 1}, true
}

// takeOne takes one slot from the counter, or else one kept by a record.
func (g *Governor) takeOne() bool {
	if g.free.Add(-1) >= 0 {
		return true
	}
	g.putSlots(1)
	return g.stealCached(1) == 1
}

// claim returns a free record, claimed: the goroutine's own, one of the next
// few, or one from the pool. A slot the record kept goes to the counter: the
// caller has taken its slots already.
func (g *Governor) claim() (*permit, uint64) {
	i := permitIndex()
	for range 1 + permitProbes {
		r := &g.table[i].permit
		if s := r.state.Load(); s&permitLive == 0 && r.state.CompareAndSwap(s, claimed(s)) {
			if s&permitCached != 0 {
				g.putSlots(1)
			}
			return r, claimed(s)
		}
		i = (i + 1) % permitTableSize
	}
	r := g.pool.Get().(*permit)
	s := claimed(r.state.Load())
	r.state.Store(s) // the pool gave it to this goroutine alone
	return r, s
}

// newPermit returns a Permit for slots already taken, charged to key. If
// Config.NowFunc ends the goroutine (runtime.Goexit) as the key is charged,
// the slots go back, so that none is lost with the goroutine.
func (g *Governor) newPermit(key string, slots int64) Permit {
	r, s := g.claim()
	p := Permit{p: r, state: s, slots: slots}
	if key != "" {
		charged := false
		defer func() {
			if !charged {
				p.Release()
			}
		}()
		p.acct = g.usage.acquire(key, slots)
		charged = true
	}
	return p
}

// Release returns the Permit's slots, waking blocked Acquire calls they let
// through, and charges its key with slots × the time held. Only the first
// call on a Permit, or on any copy of it, has an effect. The slots go back
// before the key is charged, so that a Config.NowFunc that panics or ends
// the goroutine (runtime.Goexit) as it is read loses no slot; the key then
// holds them no more either, uncharged for the time since its usage was
// last counted (by a grant, a Release or Usage of the key).
func (p Permit) Release() {
	r := p.p
	if r == nil {
		return
	}
	g := r.g
	if p.slots != 1 || r.pooled || g.gate.Load() >= gateWatch {
		if !r.state.CompareAndSwap(p.state, p.state&^permitLive) {
			return
		}
		if r.pooled {
			g.pool.Put(r)
		}
		g.putSlots(p.slots)
		if p.acct != nil {
			g.usage.release(p.acct, p.slots)
		}
		return
	}
	// One slot, no waiters, no watchers: the record keeps it.
	cached := p.state&^permitLive | permitCached
	if !r.state.CompareAndSwap(p.state, cached) {
		return
	}
	g.markCached(r)
	if g.gate.Load() >= gateWatch { // a waiter or watcher came meanwhile: hand the slot on
		if r.state.CompareAndSwap(cached, cached&^permitCached) {
			g.putSlots(1)
		}
	}
	if p.acct != nil {
		g.usage.release(p.acct, 1)
	}
}

// markCached sets r's bit in Governor.cached, which tells stealCached and
// flushCached which records may keep a slot. In the common case the bit is
// set already and this is a load.
func (g *Governor) markCached(r *permit) {
	if bit := uint64(1) << r.idx; g.cached.Load()&bit == 0 {
		g.cached.Or(bit)
	}
}

// stealCached takes up to n slots that records keep, and returns how many it
// took. It clears the bits of records found without one; a record that
// caches a slot meanwhile sets its bit again (markCached after its
// compare-and-swap; the recheck after clearing here closes the gap).
func (g *Governor) stealCached(n int64) (got int64) {
	for h := g.cached.Load(); h != 0 && got < n; h &= h - 1 {
		i := bits.TrailingZeros64(h)
		r := &g.table[i].permit
		s := r.state.Load()
		if s&permitCached == 0 {
			g.cached.And(^(uint64(1) << i))
			if s = r.state.Load(); s&permitCached == 0 {
				continue
			}
			g.cached.Or(uint64(1) << i)
		}
		if r.state.CompareAndSwap(s, s&^permitCached) {
			got++
		}
	}
	return got
}

// flushCached moves every slot that records keep to the counter, and reports
// whether there were any. It wakes no waiter: callers that do not hold mu
// follow it with putSlots or take.
func (g *Governor) flushCached() bool {
	n := g.stealCached(permitTableSize)
	g.free.Add(n)
	return n > 0
}

// cachedSlots counts the slots that records keep.
func (g *Governor) cachedSlots() int64 {
	var n int64
	for i := range g.table {
		if g.table[i].state.Load()&permitCached != 0 {
			n++
		}
	}
	return n
}
