package sched

import (
	"context"
	"fmt"
	"math/bits"
	"slices"
	"sync"
	"time"

	"github.com/jobkit/jobkit/distinct"
	"github.com/jobkit/jobkit/internal/keys"
	"github.com/jobkit/jobkit/scope"
)

// Priorities of entries run from MinPriority to MaxPriority; higher runs
// first within a queue.
const (
	MinPriority = 1
	MaxPriority = 100
)

// Memory is the in-memory Backend, the default of every queue. It keeps its
// entries in the process: they do not survive it.
//
// Pending entries wait in one distinct.Queue per priority level, so that a
// take is a scoped take of that queue and a failed scope puts its entries
// back where they were. Around it, Memory keeps every entry by key (to
// refuse duplicates in every live state; Add refuses a key that is not
// equal to itself, such as NaN, or cannot be hashed with ErrInvalid) and by
// ID (for inspection, in ascending order), the delayed entries in a heap by
// due time, and the final ones in lists by age for retention.
//
// Costs: Add, Take and Settle are O(1) per entry, plus O(log d) for the d
// delayed entries and O(log n) for an entry in a group of n; Counts is
// O(1); Expired is O(c) for the c entries taken; List is O(log N) to find
// its start and O(1) per entry. An entry costs about 300 bytes and its
// payload; entries are recycled, so a steady stream of jobs allocates
// nothing.
type Memory[T any, K comparable] struct {
	info QueueInfo

	mu       sync.Mutex
	clock    epoch // instants as int64 nanoseconds: see epoch
	opened   bool
	seq      ID
	byKey    keyIndex[T, K]                                // live entries, and failed ones under BlockFailed
	order    order[T, K]                                   // every entry, by ID
	levels   [MaxPriority + 1]*distinct.Queue[*unit[T, K]] // pending units by priority
	queued   [MaxPriority + 1]int                          // units queued in each level
	nonEmpty [2]uint64                                     // bit p set: queued[p] > 0
	groups   map[string]*group[T, K]
	delayed  delayHeap[T, K]
	retained [3]retainList[T, K] // succeeded, failed and poisoned, cancelled
	takes    []*take[T, K]       // open takes
	counts   Counts
	free     []*mentry[T, K]
	freeTake []*take[T, K]
}

// mentry is an entry of a Memory.
type mentry[T any, K comparable] struct {
	unit[T, K] // the entry's own unit, when it has no group

	id       ID
	key      K
	payload  T
	state    State
	disabled bool
	keyed    bool   // in byKey: set and cleared by its insert and remove
	khash    uint64 // the hash of key, once in byKey
	priority int
	group    *group[T, K]
	retry    *RetryPolicy

	enqueued, runAt, started, finished, lease int64 // nanoseconds since m.clock's epoch; 0: none
	ready                                     int64 // when it last became pending: enqueued, or a runAt that came
	gen                                       uint64
	attempts, reruns, rescues, snoozes        int
	progress                                  Progress
	errs                                      []RunError

	heapAt  int           // index in delayed, or -1
	orderAt int           // index in order
	take    *take[T, K]   // the take whose claim on it is current, until settled
	held    *take[T, K]   // the last take that claimed it, until that take closes
	toTail  bool          // became pending while held, its unit in distinct's scope: queued at the tail when held's take closes
	prev    *mentry[T, K] // in a retained list
	next    *mentry[T, K]
}

// unit is what waits in a level: an entry without a group, or a group.
type unit[T any, K comparable] struct {
	e     *mentry[T, K]
	g     *group[T, K]
	level int // where the unit is queued, or 0 when it is not
}

// group holds the pending entries of one group, in ID order.
type group[T any, K comparable] struct {
	unit[T, K]
	name    string
	pending []*mentry[T, K]
	members int  // entries of the group stored
	busy    bool // an entry of the group is claimed
}

// NewMemory returns an empty in-memory backend.
func NewMemory[T any, K comparable]() *Memory[T, K] {
	return &Memory[T, K]{
		byKey:  newKeyIndex[T, K](),
		groups: make(map[string]*group[T, K]),
	}
}

// Open implements Backend. A zero Memory (&Memory[T, K]{}) is made ready
// here, as NewMemory makes one.
func (m *Memory[T, K]) Open(q QueueInfo) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.opened {
		return fmt.Errorf("%w: backend opened twice", ErrInvalid)
	}
	if m.groups == nil {
		m.byKey = newKeyIndex[T, K]()
		m.groups = make(map[string]*group[T, K])
	}
	if q.Notify == nil {
		q.Notify = func() {}
	}
	m.info, m.opened = q, true
	return nil
}

// alloc returns a zeroed entry.
func (m *Memory[T, K]) alloc() *mentry[T, K] {
	if e, ok := pop(&m.free); ok {
		return e
	}
	return new(mentry[T, K])
}

// pop removes the last element of the free list *s and returns it, or
// false if the list is empty.
func pop[E any](s *[]E) (E, bool) {
	var zero E
	n := len(*s)
	if n == 0 {
		return zero, false
	}
	e := (*s)[n-1]
	(*s)[n-1] = zero
	*s = (*s)[:n-1]
	return e, true
}

// errNilCtx is the error of a Memory method given a nil context.
var errNilCtx = fmt.Errorf("%w: nil context", ErrInvalid)

// maxFreeEntries bounds the entries kept for reuse.
const maxFreeEntries = 4096

// Add implements Backend. It notifies the scheduler after it lets go of
// the lock, so that the loop it wakes does not wait for it.
// A key that is not equal to itself (NaN) or cannot be hashed, and a group
// in a queue not opened as Grouped, are errors wrapping ErrInvalid. The key
// is hashed before the lock is taken.
func (m *Memory[T, K]) Add(ctx context.Context, a NewEntry[T, K]) (ID, bool, error) {
	if err := m.checkAdd(ctx); err != nil {
		return 0, false, err
	}
	h, err := m.checkEntry(&a)
	if err != nil {
		return 0, false, err
	}
	id, added, ready := m.addLocking(&a, h)
	if ready {
		m.info.Notify()
	}
	return id, added, nil
}

// addChunk is how many entries addAll adds at most, under one hold of the
// lock: their hashes are on its stack, and a long AddAll lets Take in
// between.
const addChunk = 64

// addAll is Add for each of the at most addChunk entries of es, in order,
// as that many calls of Add would one after another (an entry with the key
// of one before it is a duplicate of that one), with the entries checked
// and their keys hashed before the lock is taken, the lock taken once, and
// one notification. It appends a result for each to dst; on an error for
// an entry (Add's), it returns the results of the entries before it, which
// it added, and adds nothing more.
func (m *Memory[T, K]) addAll(ctx context.Context, es []NewEntry[T, K], dst []Result) ([]Result, error) {
	if err := m.checkAdd(ctx); err != nil {
		return dst, err
	}
	var hs [addChunk]uint64
	var err error
	for i := range es {
		if hs[i], err = m.checkEntry(&es[i]); err != nil {
			es = es[:i]
			break
		}
	}
	return m.addChunk(es, hs[:len(es)], dst), err
}

// addChunk adds es, whose keys have the hashes hs, under one hold of the
// lock, appends their results to dst, and notifies the scheduler once if
// any can be taken.
func (m *Memory[T, K]) addChunk(es []NewEntry[T, K], hs []uint64, dst []Result) []Result {
	ready := false
	m.mu.Lock()
	defer func() {
		m.mu.Unlock()
		if ready {
			m.info.Notify()
		}
	}()
	for i := range es {
		id, added, r := m.add(&es[i], hs[i])
		dst = append(dst, Result{ID: id, Added: added})
		ready = ready || r
	}
	return dst
}

// addLocking is add under the lock.
func (m *Memory[T, K]) addLocking(a *NewEntry[T, K], h uint64) (id ID, added, ready bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.add(a, h)
}

// checkAdd checks the context and the Memory of an add.
func (m *Memory[T, K]) checkAdd(ctx context.Context) error {
	if ctx == nil {
		return errNilCtx
	}
	if m.byKey.lay == nil { // a zero Memory, never opened: the contract is broken
		return fmt.Errorf("%w: Add to a Memory not opened", ErrInvalid)
	}
	return nil
}

// checkEntry checks a and returns the hash of its key.
func (m *Memory[T, K]) checkEntry(a *NewEntry[T, K]) (uint64, error) {
	h, ok := m.byKey.hash(a.Key)
	if !ok {
		return 0, fmt.Errorf("%w: key %s is not equal to itself or cannot be hashed", ErrInvalid, keys.Describe(a.Key))
	}
	if a.Priority < MinPriority || a.Priority > MaxPriority {
		return 0, fmt.Errorf("%w: priority %d not in [%d, %d]", ErrInvalid, a.Priority, MinPriority, MaxPriority)
	}
	if a.Group != "" && !m.info.Grouped {
		return 0, fmt.Errorf("%w: entry of group %q in a queue opened without Grouped", ErrInvalid, a.Group)
	}
	return h, nil
}

// add is Add but for the checks, the lock and the notification, of an
// entry whose key has hash h; ready reports whether the entry can be
// taken. Under m.mu.
func (m *Memory[T, K]) add(a *NewEntry[T, K], h uint64) (id ID, added, ready bool) {
	old, slot := m.byKey.lookup(a.Key, h)
	if old != nil {
		return old.id, false, false
	}
	m.seq++
	m.counts.Added++
	e := m.alloc()
	e.unit = unit[T, K]{e: e}
	e.id, e.key, e.payload = m.seq, a.Key, a.Payload
	e.priority, e.disabled, e.retry = a.Priority, a.Disabled, a.Retry
	e.enqueued = m.clock.ns(a.Now)
	e.ready = e.enqueued
	e.heapAt = -1
	if a.Group != "" {
		g := m.groups[a.Group]
		if g == nil {
			g = &group[T, K]{name: a.Group}
			g.unit.g = g
			m.groups[a.Group] = g
		}
		e.group = g
		g.members++
	}
	m.byKey.insert(slot, h, e)
	m.order.push(e)
	if a.RunAt.After(a.Now) {
		e.runAt = m.clock.ns(a.RunAt)
		m.setState(e, StateDelayed)
		m.delayed.push(e)
		return e.id, true, false
	}
	m.setState(e, StatePending)
	return e.id, true, m.makeTakeable(e)
}

// setState moves e to state s, keeping the counts.
func (m *Memory[T, K]) setState(e *mentry[T, K], s State) {
	if e.state != 0 {
		m.counts.add(e.state, -1)
		if e.disabled && e.state.Live() {
			m.counts.Disabled--
		}
	}
	e.state = s
	m.counts.add(s, 1)
	if e.disabled && s.Live() {
		m.counts.Disabled++
	}
}

// enqueue makes the pending entry e takeable, unless it is disabled, and
// notifies the scheduler.
func (m *Memory[T, K]) enqueue(e *mentry[T, K]) {
	if m.makeTakeable(e) {
		m.info.Notify()
	}
}

// makeTakeable makes the pending entry e takeable, unless it is disabled,
// and reports whether it did.
func (m *Memory[T, K]) makeTakeable(e *mentry[T, K]) bool {
	if e.disabled {
		return false
	}
	if g := e.group; g != nil {
		i, _ := slices.BinarySearchFunc(g.pending, e.id, func(x *mentry[T, K], id ID) int { return cmpID(x.id, id) })
		g.pending = slices.Insert(g.pending, i, e)
		m.relevel(g)
	} else if !m.queue(&e.unit, e.priority) && e.held != nil {
		// Its unit is still in the scope of the take that ran it (a retry
		// or snooze that came due, an Enable, a Retry of an entry settled
		// earlier in a batch that still runs). It became pending now, so
		// it goes to the tail, not back to the place it had before it
		// ran; and at once, not when that take closes: the take's other
		// entries may run for long, while a worker is idle. Its unit
		// leaves the take's scope for that (settled there as done).
		if m.levels[e.priority].Complete(e.held.s, &e.unit) && m.queue(&e.unit, e.priority) {
			return true
		}
		e.toTail = true // queued when the take closes
	}
	return true
}

// relevel queues the group g, unless it is busy, at the priority of its
// oldest pending entry (see pendingLevel): where it is if that is its
// level, at the tail of that level if it moves, nowhere if none is pending.
func (m *Memory[T, K]) relevel(g *group[T, K]) {
	if g.busy {
		return
	}
	want := 0
	if len(g.pending) > 0 {
		want = g.pending[0].priority
	}
	if g.level == want {
		return
	}
	if g.level != 0 {
		m.unqueue(&g.unit)
	}
	if want != 0 {
		m.queue(&g.unit, want)
	}
}

func cmpID(a, b ID) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// queue adds u at the tail of level p. distinct refuses a unit still in
// progress under a take that has not closed; that take's done queues it
// then.
func (m *Memory[T, K]) queue(u *unit[T, K], p int) bool {
	q := m.levels[p]
	if q == nil {
		q = new(distinct.Queue[*unit[T, K]])
		m.levels[p] = q
	}
	if !q.Add(u) {
		return false
	}
	m.countLevel(p, 1)
	u.level = p
	return true
}

// countLevel adds n to the units queued at level p.
func (m *Memory[T, K]) countLevel(p, n int) {
	m.queued[p] += n
	if m.queued[p] > 0 {
		m.nonEmpty[p/64] |= 1 << (p % 64)
	} else {
		m.nonEmpty[p/64] &^= 1 << (p % 64)
	}
}

// unqueue removes the queued unit u from its level.
func (m *Memory[T, K]) unqueue(u *unit[T, K]) {
	if u.level != 0 && m.levels[u.level].Remove(u) {
		m.countLevel(u.level, -1)
	}
	u.level = 0
}

// top returns the highest level with units queued, or 0.
func (m *Memory[T, K]) top() int {
	if w := m.nonEmpty[1]; w != 0 {
		return 64 + 63 - bits.LeadingZeros64(w)
	}
	if w := m.nonEmpty[0]; w != 0 {
		return 63 - bits.LeadingZeros64(w)
	}
	return 0
}

// promote makes the delayed entries due at now pending.
func (m *Memory[T, K]) promote(now int64) {
	for len(m.delayed) > 0 && m.delayed[0].runAt <= now {
		e := m.delayed.pop()
		e.ready, e.runAt = e.runAt, 0
		m.setState(e, StatePending)
		m.enqueue(e)
	}
}

// done is an already cancelled context: a distinct.Take under it takes what
// is queued and never waits.
var done = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// Take implements Backend. The claims are built after the lock is let go
// of, from what the take recorded under it (see snap): the entries'
// other fields do not change while the take holds them, and the take's
// Finalize and Expired wait for the building to end (take.building).
func (m *Memory[T, K]) Take(ctx context.Context, s *scope.Scope, r TakeRequest, dst []Claim[T, K]) ([]Claim[T, K], error) {
	if ctx == nil {
		return dst, errNilCtx
	}
	if r.Max < 1 {
		return dst, fmt.Errorf("%w: Take of %d entries", ErrInvalid, r.Max)
	}
	t, err := m.take(s, r)
	if t == nil {
		return dst, err
	}
	defer t.building.Unlock() // even if building the claims panics: Finalize waits for it
	return t.claims(dst), nil
}

// take is Take under m.mu: it returns the take, its building locked, or
// nil if nothing was taken. If it panics once the take is in s (nothing
// should), it lets go of the building, so that s's close, which waits for
// it, does not wait forever.
func (m *Memory[T, K]) take(s *scope.Scope, r TakeRequest) (*take[T, K], error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.ns(r.Now)
	m.promote(now)
	if m.top() == 0 {
		return nil, nil
	}
	t := m.newTake()
	// The levels' batches are taken under a scope of the take's own, which
	// the take closes, when s closes, between fixing its entries up and
	// freeing them (see Finalize): s holds one finalizer a take.
	t.s = scope.New()
	t.building.Lock()
	if !s.TryAdd(t) {
		t.building.Unlock()
		m.recycleTake(t)
		return nil, scope.ErrClosed
	}
	built := false
	defer func() {
		if !built {
			t.building.Unlock()
		}
	}()
	var lease int64
	if !r.LeaseUntil.IsZero() {
		lease = m.clock.ns(r.LeaseUntil)
	}
	for p := m.top(); p > 0 && len(t.entries) < r.Max; p = m.top() {
		want := r.Max - len(t.entries)
		if m.info.Grouped {
			want = 1 // one unit: a group, or an entry without one
		}
		units, _ := m.levels[p].TakeAppend(done, t.s, want, t.units[:0])
		t.units = units
		if len(units) == 0 { // cannot happen: the level has units
			break
		}
		for _, u := range units {
			// Uncount only counted units. (A unit distinct put back while
			// its take was closing was not counted until that take's done;
			// since the close and done run under one hold of m.mu, a take
			// no longer sees one, but a miscount here would be for good.)
			if u.level != 0 {
				m.countLevel(u.level, -1)
			}
			u.level = 0
			if g := u.g; g != nil {
				n := min(r.Max, len(g.pending))
				for _, e := range g.pending[:n] {
					t.claim(m, e, lease)
				}
				g.pending = slices.Delete(g.pending, 0, n)
				g.busy = true
				t.group, t.groupLevel = g, p
			} else {
				t.claim(m, u.e, lease)
			}
		}
		if m.info.Grouped {
			break // a unit is taken alone
		}
	}
	clear(t.units)
	t.units = t.units[:0]
	m.takes = append(m.takes, t)
	t.open = len(m.takes) - 1
	built = true
	return t, nil
}

// claims appends the claims of t's entries to dst. It runs without m.mu,
// between the take and the end of t.building: it reads what t recorded
// of each entry under the lock, and the entry's fields that only add sets
// (ID, key, payload, priority, retry, group, enqueue time), which stay as
// they are until t's done recycles the entry, after t.building.
func (t *take[T, K]) claims(dst []Claim[T, K]) []Claim[T, K] {
	n := len(dst)
	dst = slices.Grow(dst, len(t.entries))[:n+len(t.entries)]
	for i, e := range t.entries {
		t.m.fillClaim(&dst[n+i], e, &t.snaps[i])
	}
	return dst
}

// claim returns the claim of e, under m.mu.
func (m *Memory[T, K]) claim(e *mentry[T, K]) Claim[T, K] {
	var c Claim[T, K]
	sn := e.snap()
	m.fillClaim(&c, e, &sn)
	return c
}

// fillClaim sets *c to the claim of e, with sn for the fields of e that
// change while it is claimed: under m.mu, or without it for an entry that
// a take holds (see take.claims).
func (m *Memory[T, K]) fillClaim(c *Claim[T, K], e *mentry[T, K], sn *snap) {
	*c = Claim[T, K]{
		ID: e.id, Key: e.key, Payload: e.payload, Priority: e.priority,
		Attempts: sn.attempts, Reruns: sn.reruns, Rescues: sn.rescues, Gen: sn.gen, Handle: e,
		EnqueuedAt: m.clock.time(e.enqueued), Retry: e.retry,
	}
	c.ReadyAt = c.EnqueuedAt
	if sn.ready != e.enqueued {
		c.ReadyAt = m.clock.time(sn.ready)
	}
	if e.group != nil {
		c.Group = e.group.name
	}
}

// take is one Take: the entries it claimed, each at a generation.
type take[T any, K comparable] struct {
	m       *Memory[T, K]
	s       *scope.Scope
	entries []*mentry[T, K]
	snaps   []snap        // each entry as claimed: its generation, and what its claim needs
	units   []*unit[T, K] // scratch for distinct's takes
	group   *group[T, K]  // the group taken, if any
	// groupLevel is the level the group was taken from.
	groupLevel int
	open       int // index in m.takes, or -1
	// building is held from before the take is added to its scope until
	// its claims are built: Finalize waits for it, so that no entry is
	// recycled (nor t reused) while Take reads them without m.mu; and so
	// does Expired, so that no claim of the take is handed out (and
	// settled) meanwhile. Take, which holds it, never waits for m.mu
	// meanwhile. (A mutex, not a WaitGroup: a WaitGroup given an Add in a
	// testing/synctest bubble is tied to the bubble, and a Memory used both
	// in one and out of it then crashed in Take or stranded a take in
	// Finalize.)
	building sync.Mutex
}

// awaitClaims returns once t's Take has built its claims: taking
// t.building is the wait, and nothing is done under it.
func (t *take[T, K]) awaitClaims() {
	t.building.Lock()
	//lint:ignore SA2001 taking the lock was the wait: nothing is done under it
	t.building.Unlock()
}

// snap is what a claim needs of an entry's fields that change while it is
// claimed (the generation it is claimed at among them), recorded under
// m.mu.
type snap struct {
	gen                       uint64
	attempts, reruns, rescues int
	ready                     int64
}

func (e *mentry[T, K]) snap() snap {
	return snap{gen: e.gen, attempts: e.attempts, reruns: e.reruns, rescues: e.rescues, ready: e.ready}
}

func (m *Memory[T, K]) newTake() *take[T, K] {
	if t, ok := pop(&m.freeTake); ok {
		return t
	}
	return &take[T, K]{m: m, open: -1}
}

func (m *Memory[T, K]) recycleTake(t *take[T, K]) {
	clear(t.entries)
	t.entries, t.snaps, t.group, t.open = t.entries[:0], t.snaps[:0], nil, -1
	if len(m.freeTake) < 256 && cap(t.entries) <= 1024 {
		m.freeTake = append(m.freeTake, t)
	}
}

// claim moves the pending entry e to StateAwaiting under t, with the lease
// (0: none).
func (t *take[T, K]) claim(m *Memory[T, K], e *mentry[T, K], lease int64) {
	e.gen++
	e.take, e.held = t, t
	e.lease = lease
	m.setState(e, StateAwaiting)
	t.entries = append(t.entries, e)
	t.snaps = append(t.snaps, e.snap())
}

// current reports whether the i-th entry of t is still claimed by it.
func (t *take[T, K]) current(i int) bool {
	e := t.entries[i]
	return e.take == t && e.gen == t.snaps[i].gen
}

// Finalize is the take's finalizer on the scope it was taken under: it
// fixes the entries up, closes the take's own scope (distinct settles the
// units then) with the same exit, and frees what the take no longer needs,
// all under one hold of m.mu. The close must not run without the lock:
// between it and done, a unit distinct put back is queued but not yet
// counted in its level (u.level is 0), and a Delete or SetDisabled of its
// entry meanwhile would leave the unit in distinct's queue, where a later
// Take claimed a disabled entry or a recycled one. (distinct's settlement
// takes only distinct's own lock, after m.mu, the order Take takes them in.)
func (t *take[T, K]) Finalize(exit scope.Exit) error {
	t.awaitClaims()
	m := t.m
	m.mu.Lock()
	defer m.mu.Unlock()
	t.fix(exit)
	_ = t.s.Close(exit)
	t.done()
	return nil
}

// fix runs first, before the levels' batches settle: it decides what
// becomes of every entry still claimed, and prepares distinct's settlement
// for it. A unit distinct must keep queued is one whose entry goes back to
// pending at its position; one it must drop is one whose entry was settled.
// On success distinct drops every unit, on failure it puts every unit back,
// so only the exceptions need a call now.
// It runs under m.mu.
func (t *take[T, K]) fix(exit scope.Exit) {
	m := t.m
	if g := t.group; g != nil {
		// A group's unit is always dropped (done queues it again at the
		// tail if it has entries pending), and its entries not settled go
		// back to its pending entries, in order.
		m.levels[t.groupLevel].Complete(t.s, &g.unit)
		for i, e := range t.entries {
			if t.current(i) {
				m.rerun(e)
			}
		}
		return
	}
	for i, e := range t.entries {
		if e.held != t {
			continue // claimed again since: its unit is another take's
		}
		if t.current(i) { // not settled: a rerun at its position
			m.rerunInPlace(e)
		}
		// distinct keeps the unit queued exactly when the entry is pending
		// and enabled. Both calls do nothing to a unit already settled.
		u, lv := &e.unit, m.levels[e.priority]
		keep := e.state == StatePending && !e.disabled && !e.toTail
		switch {
		case keep && !exit.Failed():
			lv.Fail(t.s, u)
		case !keep && exit.Failed():
			lv.Complete(t.s, u)
		}
	}
}

// done runs last, after distinct has settled the units: it frees what the
// take no longer needs. It runs under m.mu.
func (t *take[T, K]) done() {
	m := t.m
	if g := t.group; g != nil {
		g.busy = false
		switch {
		case len(g.pending) > 0:
			m.queue(&g.unit, g.pendingLevel())
			m.info.Notify()
		case g.members == 0:
			delete(m.groups, g.name)
		}
	}
	for i, e := range t.entries {
		if e.take == t {
			e.take = nil
		}
		if e.held != t {
			continue // claimed again since
		}
		e.held, e.toTail = nil, false
		if e.state == StatePending && !e.disabled && e.group == nil && e.unit.level == 0 && t.snaps[i].gen == e.gen {
			// Pending and not counted in a level: distinct put it back at
			// its position (fix kept it: a run not settled), and it is
			// counted now; or it became pending while its unit was in this
			// take's scope (a retry or snooze due at once, an Enable: see
			// makeTakeable) or while the scope was closing, so distinct
			// refused it then and has dropped it since: it is queued now,
			// at the tail.
			m.levels[e.priority].Add(&e.unit)
			m.countLevel(e.priority, 1)
			e.unit.level = e.priority
			m.info.Notify()
		}
		if e.state == 0 {
			m.recycle(e)
		}
	}
	if t.open >= 0 {
		last := len(m.takes) - 1
		m.takes[t.open] = m.takes[last]
		m.takes[t.open].open = t.open
		m.takes[last] = nil
		m.takes = m.takes[:last]
	}
	m.recycleTake(t)
}

// pendingLevel is the level of a group: the priority of its oldest pending
// entry.
func (g *group[T, K]) pendingLevel() int {
	if len(g.pending) == 0 {
		return g.level
	}
	return g.pending[0].priority
}

// rerunInPlace makes the claimed entry e pending again without spending an
// attempt; its unit stays where distinct keeps it.
func (m *Memory[T, K]) rerunInPlace(e *mentry[T, K]) {
	if e.state == StateRunning { // a run cut short; an entry never started spends nothing
		e.reruns++
	}
	e.take = nil
	e.lease = 0
	m.setState(e, StatePending)
}

// rerun makes the claimed entry e, of a group, pending again.
func (m *Memory[T, K]) rerun(e *mentry[T, K]) {
	if e.state == StateRunning {
		e.reruns++
	}
	e.take = nil
	e.lease = 0
	m.setState(e, StatePending)
	m.enqueue(e)
}

// recycle frees the deleted entry e for reuse.
func (m *Memory[T, K]) recycle(e *mentry[T, K]) {
	clear(e.errs)
	*e = mentry[T, K]{errs: e.errs[:0]}
	if len(m.free) < maxFreeEntries {
		m.free = append(m.free, e)
	}
}

// byID returns the stored entry with the ID, or nil: a binary search of the
// entries in ID order.
func (m *Memory[T, K]) byID(id ID) *mentry[T, K] {
	o := &m.order
	if i, ok := slices.BinarySearch(o.ids, id); ok {
		return o.s[i]
	}
	return nil
}

// claimed returns the entry of c if c's run is its current one. The claim's
// handle is the entry's record, unless it was recycled since.
func (m *Memory[T, K]) claimed(c *Claim[T, K]) (*mentry[T, K], error) {
	e, _ := c.Handle.(*mentry[T, K])
	if e == nil || e.id != c.ID {
		e = m.byID(c.ID)
	}
	if e == nil {
		return nil, ErrNotFound
	}
	if e.gen != c.Gen || e.take == nil {
		return nil, ErrStale
	}
	return e, nil
}

// Start implements Backend.
func (m *Memory[T, K]) Start(ctx context.Context, c *Claim[T, K], now, leaseUntil time.Time) error {
	if ctx == nil {
		return errNilCtx
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, err := m.claimed(c)
	if err != nil {
		return err
	}
	if e.state != StateAwaiting || e.disabled {
		return fmt.Errorf("%w: start of a %v entry (disabled %v)", ErrWrongState, e.state, e.disabled)
	}
	e.started = m.clock.ns(now)
	if !leaseUntil.IsZero() {
		e.lease = m.clock.ns(leaseUntil)
	}
	e.progress = Progress{}
	m.setState(e, StateRunning)
	return nil
}

// Settle implements Backend.
func (m *Memory[T, K]) Settle(ctx context.Context, c *Claim[T, K], o Outcome) error {
	switch {
	case ctx == nil:
		return errNilCtx
	case o.Kind < OutcomeSucceeded || o.Kind > OutcomePoisoned:
		return fmt.Errorf("%w: outcome %v", ErrInvalid, o.Kind) // before anything changes: the claim stays current
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, err := m.claimed(c)
	if err != nil {
		return err
	}
	if !o.LapsedBefore.IsZero() && (e.lease == 0 || e.lease >= m.clock.ns(o.LapsedBefore)) {
		return ErrStale // renewed (a Start, a heartbeat) since it lapsed, or never leased
	}
	t := e.take
	e.take = nil
	e.lease = 0
	if o.Err != nil {
		if len(e.errs) == MaxErrors {
			e.errs = append(e.errs[:0], e.errs[1:]...)
		}
		e.errs = append(e.errs, *o.Err)
	}
	fin := m.clock.ns(o.Finished)
	switch o.Kind {
	case OutcomeSucceeded, OutcomeFailed, OutcomeCancelled, OutcomePoisoned:
		if o.Kind != OutcomePoisoned { // a poisoned run was a rerun
			e.attempts++
		} else if o.Rescued {
			e.rescues++
		}
		e.finished = fin
		m.finish(e, finalState(o.Kind))
	case OutcomeRetry, OutcomeSnooze:
		if o.Kind == OutcomeRetry {
			e.attempts++
		} else {
			e.snoozes++
		}
		e.runAt = m.clock.ns(o.At)
		m.setState(e, StateDelayed)
		m.delayed.push(e)
	case OutcomeRerun:
		if e.state == StateRunning { // an entry never started spends nothing (see rerunInPlace)
			e.reruns++
			if o.Rescued {
				e.rescues++
			}
			// Ready to run again from now (Claim.ReadyAt), not since its
			// add: the run it had is no waiting. Not before it was last
			// ready: a Clock may go back.
			e.ready = max(fin, e.ready)
		}
		m.setState(e, StatePending)
		switch {
		case e.group != nil:
			m.enqueue(e)
		case e.disabled:
			// its unit stays claimed; the take drops it when it closes
		default:
			// back to its position at once, ahead of the scope's close
			m.levels[e.priority].Fail(t.s, &e.unit)
			m.countLevel(e.priority, 1)
			e.unit.level = e.priority
			m.info.Notify()
		}
	}
	return nil
}

func finalState(k OutcomeKind) State {
	switch k {
	case OutcomeSucceeded:
		return StateSucceeded
	case OutcomeCancelled:
		return StateCancelled
	case OutcomePoisoned:
		return StatePoisoned
	}
	return StateFailed
}

// finish moves e to the final state s: it is retained, or deleted at once.
func (m *Memory[T, K]) finish(e *mentry[T, K], s State) {
	if !(s == StateFailed && m.info.BlockFailed) {
		m.byKey.remove(e)
	}
	m.setState(e, s)
	e.disabled = false // disabling is for live entries: a final one retried runs
	l, ttl, limit := m.retention(s)
	if ttl <= 0 || limit <= 0 {
		m.counts.Expired++
		m.delete(e)
		return
	}
	m.retained[l].push(e)
	for m.retained[l].n > limit {
		m.counts.Expired++
		m.delete(m.retained[l].head)
	}
}

// retention returns the list, time to live and count limit of state s.
func (m *Memory[T, K]) retention(s State) (int, time.Duration, int) {
	r := &m.info.Retention
	switch s {
	case StateSucceeded:
		return 0, r.Succeeded, r.MaxSucceeded
	case StateCancelled:
		return 2, r.Cancelled, r.MaxCancelled
	}
	return 1, r.Failed, r.MaxFailed
}

// delete removes e from the backend; its memory is reused once no take
// refers to it.
func (m *Memory[T, K]) delete(e *mentry[T, K]) {
	switch {
	case e.state.Final():
		if e.prev != nil || e.next != nil || m.retained[0].head == e || m.retained[1].head == e || m.retained[2].head == e {
			l, _, _ := m.retention(e.state)
			m.retained[l].remove(e)
		}
	case e.state == StateDelayed:
		m.delayed.remove(e)
	case e.state == StatePending:
		if g := e.group; g != nil {
			if i := slices.Index(g.pending, e); i >= 0 {
				g.pending = slices.Delete(g.pending, i, i+1)
				m.relevel(g)
			}
		} else {
			m.unqueue(&e.unit)
		}
	}
	m.byKey.remove(e)
	if g := e.group; g != nil {
		if g.members--; g.members == 0 && !g.busy {
			delete(m.groups, g.name)
		}
	}
	m.order.remove(e)
	m.counts.add(e.state, -1)
	if e.disabled && e.state.Live() {
		m.counts.Disabled--
	}
	e.state = 0
	if e.held == nil { // else distinct may hold its unit: the take recycles it
		m.recycle(e)
	}
}

// current returns the entry id if gen is its current run, under m.mu.
func (m *Memory[T, K]) current(id ID, gen uint64) (*mentry[T, K], error) {
	e := m.byID(id)
	switch {
	case e == nil:
		return nil, ErrNotFound
	case e.gen != gen || e.take == nil:
		return nil, ErrStale
	}
	return e, nil
}

// Renew implements Backend.
func (m *Memory[T, K]) Renew(ctx context.Context, id ID, gen uint64, until time.Time) error {
	if ctx == nil {
		return errNilCtx
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, err := m.current(id, gen)
	if err == nil {
		e.lease = m.clock.ns(until)
	}
	return err
}

// Progress implements Backend.
func (m *Memory[T, K]) Progress(ctx context.Context, id ID, gen uint64, p Progress) error {
	if ctx == nil {
		return errNilCtx
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, err := m.current(id, gen)
	if err == nil {
		e.progress = p
	}
	return err
}

// Promote implements Backend.
func (m *Memory[T, K]) Promote(ctx context.Context, now time.Time) (time.Time, bool, error) {
	if ctx == nil {
		return time.Time{}, false, errNilCtx
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.promote(m.clock.ns(now))
	if len(m.delayed) == 0 {
		return time.Time{}, false, nil
	}
	return m.clock.time(m.delayed[0].runAt), true, nil
}

// Counts implements Backend.
func (m *Memory[T, K]) Counts(ctx context.Context) (Counts, error) {
	if err := checkCtx(ctx); err != nil {
		return Counts{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.counts, nil
}

// Expired implements Backend.
func (m *Memory[T, K]) Expired(ctx context.Context, now time.Time, dst []Claim[T, K]) ([]Claim[T, K], error) {
	if ctx == nil {
		return dst, errNilCtx
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.clock.set {
		// Nothing was ever taken, so no lease runs; and now (a reaper's
		// now − grace, which may be centuries back) must not become the
		// epoch of the entries to come.
		return dst, nil
	}
	n := m.clock.ns(now)
	for _, t := range m.takes {
		t.awaitClaims()
		for i, e := range t.entries {
			if t.current(i) && e.lease != 0 && e.lease < n {
				dst = append(dst, m.claim(e))
			}
		}
	}
	return dst, nil
}

// SetDisabled implements Backend.
func (m *Memory[T, K]) SetDisabled(ctx context.Context, id ID, disabled bool) error {
	if err := checkCtx(ctx); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.byID(id)
	switch {
	case e == nil:
		return ErrNotFound
	case !e.state.Live():
		return fmt.Errorf("%w: cannot disable or enable a %v entry", ErrWrongState, e.state)
	case e.disabled == disabled:
		return nil
	}
	if disabled {
		m.counts.Disabled++
		if e.state == StatePending {
			m.delete1Pending(e)
		}
		e.disabled = true
		return nil
	}
	m.counts.Disabled--
	e.disabled = false
	if e.state == StatePending {
		m.enqueue(e)
	}
	return nil
}

// delete1Pending takes the pending entry e out of its unit.
func (m *Memory[T, K]) delete1Pending(e *mentry[T, K]) {
	if g := e.group; g != nil {
		if i := slices.Index(g.pending, e); i >= 0 {
			g.pending = slices.Delete(g.pending, i, i+1)
		}
		m.relevel(g)
		return
	}
	m.unqueue(&e.unit)
}

// Expire implements Backend.
func (m *Memory[T, K]) Expire(ctx context.Context, now time.Time) (time.Time, bool, error) {
	if ctx == nil {
		return time.Time{}, false, errNilCtx
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.clock.ns(now)
	var next int64
	for l := range m.retained {
		for e := m.retained[l].head; e != nil; e = m.retained[l].head {
			_, ttl, _ := m.retention(e.state)
			end := addNanos(e.finished, ttl) // saturated: a retention of centuries
			if end > n {
				if next == 0 || end < next {
					next = end
				}
				break
			}
			m.counts.Expired++
			m.delete(e)
		}
	}
	if next == 0 {
		return time.Time{}, false, nil
	}
	return m.clock.time(next), true, nil
}

// delayHeap is a min-heap of delayed entries by due time, then ID.
type delayHeap[T any, K comparable] []*mentry[T, K]

func (h delayHeap[T, K]) less(i, j int) bool {
	a, b := h[i], h[j]
	return a.runAt < b.runAt || (a.runAt == b.runAt && a.id < b.id)
}

func (h delayHeap[T, K]) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapAt, h[j].heapAt = i, j
}

func (h *delayHeap[T, K]) push(e *mentry[T, K]) {
	*h = append(*h, e)
	e.heapAt = len(*h) - 1
	h.up(e.heapAt)
}

func (h *delayHeap[T, K]) pop() *mentry[T, K] {
	e := (*h)[0]
	h.remove(e)
	return e
}

func (h *delayHeap[T, K]) remove(e *mentry[T, K]) {
	s, i := *h, e.heapAt
	last := len(s) - 1
	if i != last {
		s.swap(i, last)
	}
	s[last] = nil
	*h = s[:last]
	if i != last {
		h.down(i)
		h.up(i)
	}
	e.heapAt = -1
	if len(*h) == 0 && cap(*h) > 1024 {
		*h = nil
	}
}

func (h delayHeap[T, K]) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h delayHeap[T, K]) down(i int) {
	for {
		l, least := 2*i+1, i
		if l < len(h) && h.less(l, least) {
			least = l
		}
		if r := l + 1; r < len(h) && h.less(r, least) {
			least = r
		}
		if least == i {
			return
		}
		h.swap(i, least)
		i = least
	}
}

// retainList is a doubly linked list of final entries, oldest first.
type retainList[T any, K comparable] struct {
	head, tail *mentry[T, K]
	n          int
}

func (l *retainList[T, K]) push(e *mentry[T, K]) {
	// In order of finish: after the last entry that did not finish later
	// (the tail, unless the clock went back), so that Expire, which stops
	// at the first entry not expired, misses none behind it.
	p := l.tail
	for p != nil && p.finished > e.finished {
		p = p.prev
	}
	e.prev = p
	if p != nil {
		e.next = p.next
		p.next = e
	} else {
		e.next = l.head
		l.head = e
	}
	if e.next != nil {
		e.next.prev = e
	} else {
		l.tail = e
	}
	l.n++
}

func (l *retainList[T, K]) remove(e *mentry[T, K]) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		l.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		l.tail = e.prev
	}
	e.prev, e.next = nil, nil
	l.n--
}

// order keeps every entry in ascending ID order: an append-only slice with
// holes for deleted entries, compacted once holes outnumber entries. A
// compaction that leaves it less than a quarter full gives the memory back,
// unless it has at most orderKeep slots (a steady load reuses them).
type order[T any, K comparable] struct {
	s     []*mentry[T, K]
	ids   []ID // ids[i] is the ID of s[i], kept for holes too
	holes int
}

// orderKeep is the capacity (16 bytes a slot) that order keeps however
// empty it is.
const orderKeep = 1 << 16

func (o *order[T, K]) push(e *mentry[T, K]) {
	e.orderAt = len(o.s)
	o.s = append(o.s, e)
	o.ids = append(o.ids, e.id)
}

func (o *order[T, K]) remove(e *mentry[T, K]) {
	o.s[e.orderAt] = nil
	o.holes++
	if o.holes > 64 && o.holes > len(o.s)/2 {
		k := 0
		for i, x := range o.s {
			if x != nil {
				o.s[k], o.ids[k] = x, o.ids[i]
				x.orderAt = k
				k++
			}
		}
		clear(o.s[k:])
		o.s, o.ids, o.holes = o.s[:k], o.ids[:k], 0
		if cap(o.s) > orderKeep && k < cap(o.s)/4 {
			o.s, o.ids = slices.Clip(o.s), slices.Clip(o.ids)
			o.s, o.ids = append([]*mentry[T, K](nil), o.s...), append([]ID(nil), o.ids...)
		}
	}
}

// after returns the index of the first entry with an ID above id.
func (o *order[T, K]) after(id ID) int {
	i, found := slices.BinarySearch(o.ids, id)
	if found {
		i++
	}
	return i
}
