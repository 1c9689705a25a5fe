package governor

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/jobkit/jobkit/internal/sat"
)

// usageBuckets is the number of buckets a usage window is divided into. Usage
// counts the oldest bucket in proportion to the part of it still in the
// window, as if its slot-time were spread evenly.
const usageBuckets = 60

// usage accounts slot-time by key over a sliding window. The account of a
// key that has held no slots for a full window (and so has no usage left in
// it) is evicted by sweep.
type usage struct {
	width     int64 // nanoseconds per bucket
	span      int64 // width × (usageBuckets+1), saturated: the buckets kept
	nowFunc   func() time.Time
	epoch     time.Time // times are nanoseconds since epoch
	accounts  sync.Map  // key string → *account
	count     atomic.Int64
	nextSweep int64 // used by the sampling goroutine alone
}

// account is the slot-time of one key, integrated at every change of the
// slots it holds.
type account struct {
	mu   sync.Mutex
	dead bool  // evicted: no longer in accounts, to be looked up again
	held int64 // slots held now
	last int64 // time of the last integration
	busy int64 // the last time it held slots
	// A ring of the buckets of the window and the one before, whose end is
	// still in the window: bucket id is at index id % (usageBuckets+1).
	sums [usageBuckets + 1]int64
	ids  [usageBuckets + 1]int64 // the bucket id sums[i] belongs to
}

func (u *usage) init(window time.Duration, nowFunc func() time.Time) {
	u.width = max(int64(window)/usageBuckets, 1)
	// Saturated: for a window near math.MaxInt64 ("for ever") the product
	// wrapped around to a negative span, and no slot-time was counted.
	u.span = sat.Mul(u.width, usageBuckets+1)
	u.nowFunc = nowFunc
	u.epoch = nowFunc()
}

func (u *usage) now() int64 { return int64(u.nowFunc().Sub(u.epoch)) }

// acquire records that key now holds slots more, and returns its account.
func (u *usage) acquire(key string, slots int64) *account {
	now := u.now()
	for {
		v, ok := u.accounts.Load(key)
		if !ok {
			if v, ok = u.accounts.LoadOrStore(key, new(account)); !ok {
				u.count.Add(1)
			}
		}
		a := v.(*account)
		a.mu.Lock()
		if a.dead { // evicted since it was loaded
			a.mu.Unlock()
			continue
		}
		u.advanceLocked(a, now)
		a.held += slots
		a.busy = now
		a.mu.Unlock()
		return a
	}
}

// release records that a holds slots fewer. If Config.NowFunc panics or
// ends the goroutine (runtime.Goexit) as it is read, a holds them no more
// all the same, uncharged for the time since a was last integrated: before,
// a held them for ever, its usage grew to the whole window and it was never
// evicted.
func (u *usage) release(a *account, slots int64) {
	released := false
	defer func() {
		if !released {
			a.mu.Lock()
			a.held -= slots
			a.mu.Unlock()
		}
	}()
	now := u.now()
	a.mu.Lock()
	u.advanceLocked(a, now)
	a.held -= slots
	released = true
	a.mu.Unlock()
}

// advanceLocked adds held × the time since the last integration to the
// buckets that time falls in, or to those still in the window. The sums
// saturate at math.MaxInt64 (292 years of one slot): before, many slots
// held for long, such as math.MaxInt32 slots for a minute under a window of
// an hour, wrapped around to a negative usage.
func (u *usage) advanceLocked(a *account, now int64) {
	if now <= a.last {
		return // the clock did not move, or moved back
	}
	from := max(a.last, now-u.span) // a.last ≥ 0, so from ≥ 0
	if a.held > 0 {
		a.busy = now
	}
	for a.held > 0 && from < now {
		id := from / u.width
		// The end of from's bucket, or now: from plus the rest of the
		// bucket, not (id+1)·width, which overflows in the last bucket
		// of the int64 range.
		end := now
		if rest := u.width - from%u.width; now-from > rest {
			end = from + rest
		}
		i := id % (usageBuckets + 1)
		if a.ids[i] != id {
			a.ids[i], a.sums[i] = id, 0
		}
		a.sums[i] = sat.Add(a.sums[i], sat.Mul(a.held, end-from))
		from = end
	}
	a.last = now
}

// Usage returns the slot-time charged to key over the last Config.UsageWindow
// (to within a sixtieth of the window): the sum, over its Permits, of slots ×
// the time they were held within the window, including Permits not yet
// released. One slot held for the whole of a one-minute window is one minute.
//
// A scheduler can compare the usage of its queues to serve the one that has
// used the least. The Governor keeps a record of about 1.2KiB for each key
// that has held slots within the last window, or holds some now: the sampling
// goroutine evicts a key once it has been idle for a full window (and a
// sixtieth), within a quarter of a window. Usage does not keep a key alive,
// nor create a record for a key it does not know.
func (g *Governor) Usage(key string) time.Duration {
	if g.table == nil { // not made by New: no clock, no usage
		return 0
	}
	u := &g.usage
	now := u.now()
	var a *account
	for {
		v, ok := u.accounts.Load(key)
		if !ok {
			return 0
		}
		a = v.(*account)
		a.mu.Lock()
		if !a.dead {
			break
		}
		a.mu.Unlock() // evicted since it was loaded: look again
	}
	defer a.mu.Unlock()
	u.advanceLocked(a, now)
	// The window is the current bucket, up to now, the usageBuckets-1 before
	// it and the part of the oldest bucket that is still inside the window.
	cur := now / u.width
	oldest, inside := cur-usageBuckets, u.width-now%u.width
	var sum int64
	for i, id := range a.ids {
		switch {
		case id > oldest:
			sum = sat.Add(sum, a.sums[i])
		case id == oldest:
			// Converted saturated: a saturated sum times a whole
			// bucket is 2⁶³, past the int64 range.
			sum = sat.Add(sum, sat.FromFloat(float64(a.sums[i])*float64(inside)/float64(u.width)))
		}
	}
	return time.Duration(sum)
}

// sweep evicts the accounts that have held no slots for a full window and
// its oldest bucket, so that none of their usage is left in the window. It
// looks at every account once every quarter of a window, no more often. Only
// the sampling goroutine calls it, at t.
func (u *usage) sweep(t time.Time) {
	now := int64(t.Sub(u.epoch))
	if now < u.nextSweep {
		return
	}
	idle := u.span
	u.nextSweep = sat.Add(now, idle/4)
	u.accounts.Range(func(key, v any) bool {
		a := v.(*account)
		a.mu.Lock()
		if a.held == 0 && now-a.busy >= idle {
			a.dead = true
			u.accounts.CompareAndDelete(key, a)
			u.count.Add(-1)
		}
		a.mu.Unlock()
		return true
	})
}
