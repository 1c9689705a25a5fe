package sched

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Inspector is the management view of a scheduler's queues, whatever their
// payload and key types: it lists, counts, gets, deletes and retries
// entries across queues, pauses queues and disables entries. Entries appear
// as Summary values, with keys formatted as text and payloads, when asked
// for, as any. For typed access use the Queue's own methods.
//
// All methods are safe for concurrent use.
type Inspector struct{ s *Scheduler }

// Inspector returns the scheduler's management view.
func (s *Scheduler) Inspector() *Inspector { return &Inspector{s} }

// check returns the error of a call under ctx of an Inspector (see
// checkCtx), and one wrapping ErrInvalid for an Inspector not made by
// Scheduler.Inspector. Every method that takes a context checks it first,
// through queues or runner.
func (i *Inspector) check(ctx context.Context) error {
	if i == nil {
		return errNotMade
	}
	if err := i.s.made(); err != nil {
		return err
	}
	return checkCtx(ctx)
}

// Summary describes one entry for management: an Entry with its key as
// text and its payload, if asked for, as any.
type Summary struct {
	ID       ID
	Queue    string
	Key      string
	Payload  any `json:",omitempty"`
	State    State
	Disabled bool
	Priority int
	Group    string `json:",omitempty"`

	EnqueuedAt time.Time
	RunAt      time.Time `json:",omitzero"`
	StartedAt  time.Time `json:",omitzero"`
	FinishedAt time.Time `json:",omitzero"`

	Attempts, Reruns, Rescues, Snoozes int
	Progress                           Progress   `json:",omitzero"`
	Errors                             []RunError `json:",omitempty"`
}

// Cursor is a position in a listing: entries are listed by queue name,
// then ID, and a listing from a cursor starts after it. Its text form,
// "queue/id", is what Summary.Cursor returns and ParseCursor reads.
type Cursor struct {
	Queue string
	ID    ID
}

// Cursor returns the position of the summary's entry, to list from after it.
func (s *Summary) Cursor() Cursor { return Cursor{s.Queue, s.ID} }

// String returns "queue/id", or "" for the zero Cursor.
func (c Cursor) String() string {
	if c == (Cursor{}) {
		return ""
	}
	return c.Queue + "/" + strconv.FormatUint(uint64(c.ID), 10)
}

// ParseCursor reads a cursor in the form String writes; "" is the zero
// Cursor, the start.
func ParseCursor(s string) (Cursor, error) {
	if s == "" {
		return Cursor{}, nil
	}
	i := strings.LastIndexByte(s, '/')
	if i <= 0 {
		return Cursor{}, fmt.Errorf("%w: cursor %q is not queue/id", ErrInvalid, s)
	}
	id, err := strconv.ParseUint(s[i+1:], 10, 64)
	if err != nil {
		return Cursor{}, fmt.Errorf("%w: cursor %q: %v", ErrInvalid, s, err)
	}
	return Cursor{s[:i], ID(id)}, nil
}

// Query selects entries across queues. The zero Query selects every entry
// of every queue.
type Query struct {
	// Queues, if not empty, selects entries of the queues named.
	Queues []string
	// States, if not empty, selects entries in one of them.
	States []State
	// KeyPrefix, if not empty, selects entries whose key, as text, starts
	// with it.
	KeyPrefix string
	// From and To, if not zero, select entries enqueued at or after From
	// and before To.
	From, To time.Time
	// Match, if not nil, selects entries it accepts. It sees payloads only
	// if Payloads. It runs outside the queues' locks and may call them.
	Match func(*Summary) bool
	// After, if not zero, lists from after the cursor.
	After Cursor
	// Payloads asks for payloads in the summaries.
	Payloads bool
}

// simple reports whether q selects by queue and state alone, so that a
// count needs no listing.
func (q *Query) simple() bool {
	return q.KeyPrefix == "" && q.From.IsZero() && q.To.IsZero() && q.Match == nil && q.After == (Cursor{})
}

// queues returns the registered queues that q selects, sorted by name, or an
// error wrapping ErrUnknownQueue for a name no queue has.
func (i *Inspector) queues(ctx context.Context, q *Query) ([]runner, error) {
	if err := i.check(ctx); err != nil {
		return nil, err
	}
	i.s.mu.Lock()
	defer i.s.mu.Unlock()
	var out []runner
	if len(q.Queues) == 0 {
		out = slices.Clone(i.s.queues)
	} else {
		for _, name := range q.Queues {
			r := i.s.byName[name]
			if r == nil {
				return nil, fmt.Errorf("%w: %q", ErrUnknownQueue, name)
			}
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b runner) int { return cmp.Compare(a.base().name, b.base().name) })
	return slices.CompactFunc(out, func(a, b runner) bool { return a == b }), nil
}

// List yields the entries q selects, by queue name then ID, in constant
// space: each queue's backend copies a page at a time. An entry added,
// changed or deleted while the listing runs may or may not be seen, and is
// seen at most once; entries that stay put are all seen, in order. To list
// page by page, stop after a page and list again with After set to the
// cursor of its last entry: the next page starts where it stopped, however
// the queues changed meanwhile.
func (i *Inspector) List(ctx context.Context, q Query) iter.Seq2[Summary, error] {
	return func(yield func(Summary, error) bool) {
		rs, err := i.queues(ctx, &q)
		if err != nil {
			yield(Summary{}, err)
			return
		}
		for _, r := range rs {
			name := r.base().name
			after := ID(0)
			switch c := cmp.Compare(name, q.After.Queue); {
			case c < 0:
				continue
			case c == 0:
				after = q.After.ID
			}
			for s, err := range r.list(ctx, &q, after) {
				if !yield(s, err) || err != nil {
					return
				}
			}
		}
	}
}

// Count returns the number of entries q selects: in O(1) per queue when it
// selects by queue and state alone, else by listing them.
func (i *Inspector) Count(ctx context.Context, q Query) (int, error) {
	if !q.simple() {
		n := 0
		for _, err := range i.List(ctx, q) {
			if err != nil {
				return n, err
			}
			n++
		}
		return n, nil
	}
	rs, err := i.queues(ctx, &q)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range rs {
		c, err := r.counts(ctx)
		if err != nil {
			return n, err
		}
		if len(q.States) == 0 {
			n += c.Live() + c.Retained()
		}
		for _, s := range slices.Compact(slices.Sorted(slices.Values(q.States))) {
			n += c.Of(s)
		}
	}
	return n, nil
}

// runner returns the queue named name.
func (i *Inspector) runner(ctx context.Context, name string) (runner, error) {
	if err := i.check(ctx); err != nil {
		return nil, err
	}
	i.s.mu.Lock()
	defer i.s.mu.Unlock()
	r := i.s.byName[name]
	if r == nil {
		return nil, fmt.Errorf("%w: %q", ErrUnknownQueue, name)
	}
	return r, nil
}

// Get returns the entry of queue with the ID, with its payload.
func (i *Inspector) Get(ctx context.Context, queue string, id ID) (Summary, error) {
	r, err := i.runner(ctx, queue)
	if err != nil {
		return Summary{}, err
	}
	return r.get(ctx, id)
}

// Delete deletes the entries q selects that are not awaiting or running,
// and returns how many it deleted.
func (i *Inspector) Delete(ctx context.Context, q Query) (int, error) {
	return i.each(ctx, &q, func(r runner) (int, error) { return r.delete(ctx, &q) })
}

// Retry makes the final entries q selects (failed, cancelled, poisoned or
// succeeded) pending again, with their attempts reset to zero if reset, and
// returns how many. An entry whose key a live entry has taken meanwhile is
// left as it is.
func (i *Inspector) Retry(ctx context.Context, q Query, reset bool) (int, error) {
	return i.each(ctx, &q, func(r runner) (int, error) { return r.retry(ctx, &q, reset) })
}

// RetryID is Retry of the one entry of queue with the ID. It returns
// ErrNotFound if there is none, and ErrWrongState if it is not final or
// its key is taken.
func (i *Inspector) RetryID(ctx context.Context, queue string, id ID, reset bool) error {
	r, err := i.runner(ctx, queue)
	if err != nil {
		return err
	}
	return r.one(ctx, id, func(f *one) (int, error) { return r.retryOne(ctx, f, reset) })
}

// DeleteID deletes the entry of queue with the ID. It returns ErrNotFound
// if there is none, and ErrWrongState if it is awaiting or running.
func (i *Inspector) DeleteID(ctx context.Context, queue string, id ID) error {
	r, err := i.runner(ctx, queue)
	if err != nil {
		return err
	}
	return r.one(ctx, id, func(f *one) (int, error) { return r.deleteOne(ctx, f) })
}

// one selects the entry with an ID, for RetryID and DeleteID.
type one struct{ id ID }

func (i *Inspector) each(ctx context.Context, q *Query, do func(runner) (int, error)) (int, error) {
	rs, err := i.queues(ctx, q)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range rs {
		if c := cmp.Compare(r.base().name, q.After.Queue); c < 0 {
			continue
		}
		k, err := do(r)
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Pause pauses the queue named queue (see Queue.Pause).
func (i *Inspector) Pause(queue string) error { return i.setPaused(queue, true) }

// Resume resumes the queue named queue.
func (i *Inspector) Resume(queue string) error { return i.setPaused(queue, false) }

func (i *Inspector) setPaused(queue string, paused bool) error {
	r, err := i.runner(context.Background(), queue)
	if err != nil {
		return err
	}
	r.base().paused.Store(paused)
	i.s.wakeLoops()
	return nil
}

// Disable disables the live entry of queue with the ID (see Queue.Disable).
func (i *Inspector) Disable(ctx context.Context, queue string, id ID) error {
	return i.setDisabled(ctx, queue, id, true)
}

// Enable enables it again.
func (i *Inspector) Enable(ctx context.Context, queue string, id ID) error {
	return i.setDisabled(ctx, queue, id, false)
}

func (i *Inspector) setDisabled(ctx context.Context, queue string, id ID, disabled bool) error {
	r, err := i.runner(ctx, queue)
	if err != nil {
		return err
	}
	return r.setDisabled(ctx, id, disabled)
}

// QueueSummary describes one queue for operators.
type QueueSummary struct {
	Name     string
	Priority int
	Paused   bool
	// MaxConcurrency and Rate are the queue's current limits (0: none).
	MaxConcurrency int
	Rate           float64
	Counts         Counts
	// OldestPending is the age of the oldest pending entry (0: none),
	// disabled or not. Its age counts from its add, not from when it last
	// became ready (the end of a delay, a retry's backoff, a snooze): it
	// says how old the backlog is. How long entries waited once ready is
	// the queue-latency metric's (see MetricsProvider).
	OldestPending time.Duration
	// Succeeded and Failed count the runs that ended so over the last
	// minute (failed counts failures that will be retried too);
	// Throughput is Succeeded per second over that minute, FailureRate the
	// share of runs that failed.
	Succeeded, Failed int
	// Ended counts the runs that ended since the scheduler was made, by
	// any outcome: a reaper that sees it stand still while entries wait
	// knows that no slot frees up.
	Ended       uint64
	Throughput  float64
	FailureRate float64
}

// Summaries returns a summary of every queue, by name.
func (i *Inspector) Summaries(ctx context.Context) ([]QueueSummary, error) {
	rs, err := i.queues(ctx, &Query{})
	if err != nil {
		return nil, err
	}
	out := make([]QueueSummary, 0, len(rs))
	for _, r := range rs {
		qs, err := i.summary(ctx, r)
		if err != nil {
			return out, err
		}
		out = append(out, qs)
	}
	return out, nil
}

// Summary returns the summary of the queue named queue.
func (i *Inspector) Summary(ctx context.Context, queue string) (QueueSummary, error) {
	r, err := i.runner(ctx, queue)
	if err != nil {
		return QueueSummary{}, err
	}
	return i.summary(ctx, r)
}

func (i *Inspector) summary(ctx context.Context, r runner) (QueueSummary, error) {
	now := i.s.clock.Now()
	{
		b := r.base()
		c, err := r.counts(ctx)
		if err != nil {
			return QueueSummary{}, err
		}
		qs := QueueSummary{
			Name: b.name, Priority: b.priority, Paused: b.paused.Load(),
			MaxConcurrency: int(b.maxConc.Load()), Counts: c,
		}
		if lim := b.limiter.Load(); lim != nil {
			qs.Rate = float64(lim.Limit())
		}
		if c.Pending > 0 {
			for s, err := range r.list(ctx, &Query{States: []State{StatePending}}, 0) {
				if err == nil && !s.EnqueuedAt.IsZero() {
					qs.OldestPending = max(now.Sub(s.EnqueuedAt), 0)
				}
				break
			}
		}
		qs.Succeeded, qs.Failed = b.window.sums(i.s.ns(now))
		qs.Ended = b.ended.Load()
		qs.Throughput = float64(qs.Succeeded) / windowSpan.Seconds()
		if total := qs.Succeeded + qs.Failed; total > 0 {
			qs.FailureRate = float64(qs.Failed) / float64(total)
		}
		return qs, nil
	}
}

// The typed side of the Inspector: each Queue turns a Query into a Filter of
// its types and its entries into Summaries.

// filter returns the Filter of q for entries after the ID.
func (q *Queue[T, K]) filter(qy *Query, after ID) Filter[T, K] {
	f := Filter[T, K]{States: qy.States, From: qy.From, To: qy.To, After: after, Payloads: qy.Payloads || qy.Match != nil}
	if p := qy.KeyPrefix; p != "" {
		f.Key = func(k K) bool { return strings.HasPrefix(formatKey(k), p) }
	}
	if m := qy.Match; m != nil {
		payloads := qy.Payloads
		f.Match = func(e *Entry[T, K]) bool {
			s := summarize(e, payloads)
			return m(&s)
		}
	}
	return f
}

// formatKey formats a key as text.
func formatKey[K comparable](k K) string {
	switch v := any(k).(type) {
	case string:
		return v
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case uint64:
		return strconv.FormatUint(v, 10)
	}
	return fmt.Sprint(k)
}

// summarize returns the summary of e, with its payload if payload.
func summarize[T any, K comparable](e *Entry[T, K], payload bool) Summary {
	s := Summary{
		ID: e.ID, Queue: e.Queue, Key: formatKey(e.Key), State: e.State, Disabled: e.Disabled,
		Priority: e.Priority, Group: e.Group, EnqueuedAt: e.EnqueuedAt, RunAt: e.RunAt,
		StartedAt: e.StartedAt, FinishedAt: e.FinishedAt, Attempts: e.Attempts,
		Reruns: e.Reruns, Rescues: e.Rescues, Snoozes: e.Snoozes, Progress: e.Progress, Errors: e.Errors,
	}
	if payload {
		s.Payload = e.Payload
	}
	return s
}

func (q *Queue[T, K]) list(ctx context.Context, qy *Query, after ID) iter.Seq2[Summary, error] {
	return func(yield func(Summary, error) bool) {
		for e, err := range q.backend.List(ctx, q.filter(qy, after)) {
			if err != nil {
				yield(Summary{}, err)
				return
			}
			if !yield(summarize(&e, qy.Payloads), nil) {
				return
			}
		}
	}
}

func (q *Queue[T, K]) get(ctx context.Context, id ID) (Summary, error) {
	e, err := q.backend.Get(ctx, id)
	if err != nil {
		return Summary{}, err
	}
	return summarize(&e, true), nil
}

// cursor returns where q's part of a listing from qy.After starts.
func (q *Queue[T, K]) cursor(qy *Query) ID {
	if qy.After.Queue == q.name {
		return qy.After.ID
	}
	return 0
}

func (q *Queue[T, K]) delete(ctx context.Context, qy *Query) (int, error) {
	return q.backend.Delete(ctx, q.filter(qy, q.cursor(qy)))
}

func (q *Queue[T, K]) retry(ctx context.Context, qy *Query, reset bool) (int, error) {
	n, err := q.backend.Retry(ctx, q.filter(qy, q.cursor(qy)), reset, q.s.clock.Now())
	if n > 0 {
		q.notify()
	}
	return n, err
}

// one calls do for the entry with the ID and turns what it did into
// RetryID's and DeleteID's errors.
func (q *Queue[T, K]) one(ctx context.Context, id ID, do func(*one) (int, error)) error {
	if _, err := q.backend.Get(ctx, id); err != nil {
		return err
	}
	n, err := do(&one{id})
	if err == nil && n == 0 {
		if _, err = q.backend.Get(ctx, id); err == nil {
			err = fmt.Errorf("%w: entry %d", ErrWrongState, id)
		}
	}
	return err
}

func (q *Queue[T, K]) retryOne(ctx context.Context, o *one, reset bool) (int, error) {
	n, err := q.backend.Retry(ctx, Filter[T, K]{After: o.id - 1, Until: o.id}, reset, q.s.clock.Now())
	if n > 0 {
		q.notify()
	}
	return n, err
}

func (q *Queue[T, K]) deleteOne(ctx context.Context, o *one) (int, error) {
	return q.backend.Delete(ctx, Filter[T, K]{After: o.id - 1, Until: o.id})
}

func (q *Queue[T, K]) setDisabled(ctx context.Context, id ID, disabled bool) error {
	return q.backend.SetDisabled(ctx, id, disabled)
}
