package governor

import "sync/atomic"

// Permit is the right to run one unit of work, granted by TryAcquire or
// Acquire. Release returns its slots and charges the time they were held to
// its key.
//
// A Permit is a small value: it may be copied, and Release may be called on
// any copy, from any goroutine, any number of times; only the first call has
// an effect. The zero Permit is valid and releases nothing.
type Permit struct {
	p   *permit
	gen uint64 // p.gen while this grant is live
}

// permit is the pooled record behind a Permit. The first Release of a grant
// moves its generation on, so the Permits of earlier grants never match it
// again: a grant needs no atomic write.
type permit struct {
	gen   atomic.Uint64
	g     *Governor
	acct  *account // nil when the key is ""
	slots int64
}

// newPermit returns a Permit for slots already taken, charged to key.
func (g *Governor) newPermit(key string, slots int64) Permit {
	p := g.permits.Get().(*permit)
	p.slots = slots
	if key != "" {
		p.acct = g.usage.acquire(key, slots)
	}
	return Permit{p: p, gen: p.gen.Load()}
}

// Release returns the Permit's slots, waking blocked Acquire calls they let
// through, and charges its key with slots × the time held. Only the first
// call on a Permit, or on any copy of it, has an effect.
func (p Permit) Release() {
	r := p.p
	if r == nil || !r.gen.CompareAndSwap(p.gen, p.gen+1) {
		return
	}
	g, acct, slots := r.g, r.acct, r.slots
	r.acct = nil
	g.permits.Put(r)
	if acct != nil {
		g.usage.release(acct, slots)
	}
	g.putSlots(slots, false)
}
