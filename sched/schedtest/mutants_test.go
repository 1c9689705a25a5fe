package schedtest_test

import (
	"context"
	"iter"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/schedtest"
	"github.com/jobkit/jobkit/scope"
)

type P = schedtest.Payload

// mutant is Memory with one part of the Backend contract broken.
type mutant struct {
	*sched.Memory[P, string]
	kind  string
	allow atomic.Int32 // muteRequeue: Notify passes only inside these calls
	// disabled is disabledCountKept's own count of disabled entries, kept
	// by Add and SetDisabled: a Delete does not lower it.
	disabled atomic.Int64
}

// filtered returns f as a mutant of the kinds deleteIgnores… and
// retryIgnores… applies it in op ("delete" or "retry"): a backend whose
// own query for Delete or Retry drops a clause of the filter.
func (b *mutant) filtered(op string, f sched.Filter[P, string]) sched.Filter[P, string] {
	switch strings.TrimPrefix(b.kind, op) {
	case "IgnoresStates":
		f.States = nil
	case "IgnoresKey":
		f.Key = nil
	case "IgnoresTime":
		f.From, f.To = time.Time{}, time.Time{}
	case "IgnoresMatch":
		f.Match = nil
	case "IgnoresAfter":
		f.After = 0
	}
	return f
}

func (b *mutant) allowing() func() { b.allow.Add(1); return func() { b.allow.Add(-1) } }

func (b *mutant) Open(q sched.QueueInfo) error {
	if b.kind == "muteRequeue" {
		n := q.Notify
		q.Notify = func() {
			if b.allow.Load() > 0 && n != nil {
				n()
			}
		}
	}
	if b.kind == "maxZeroKeepsAll" { // Retention: "zero keeps none"
		for _, max := range []*int{&q.Retention.MaxSucceeded, &q.Retention.MaxFailed, &q.Retention.MaxCancelled} {
			if *max == 0 {
				*max = 1 << 30
			}
		}
	}
	return b.Memory.Open(q)
}

func (b *mutant) Add(ctx context.Context, a sched.NewEntry[P, string]) (sched.ID, bool, error) {
	defer b.allowing()()
	switch {
	case b.kind == "groupsIgnorePriority" && a.Group != "",
		b.kind == "takeIgnoresPriority":
		a.Priority = sched.MinPriority
	}
	id, added, err := b.Memory.Add(ctx, a)
	if added && a.Disabled {
		b.disabled.Add(1)
	}
	return id, added, err
}

func (b *mutant) Promote(ctx context.Context, now time.Time) (time.Time, bool, error) {
	defer b.allowing()()
	return b.Memory.Promote(ctx, now)
}

func (b *mutant) Retry(ctx context.Context, f sched.Filter[P, string], reset bool, now time.Time) (int, error) {
	defer b.allowing()()
	selected := 0
	if b.kind == "retryCountsSelected" { // counts what it selected, retried or not
		for e, err := range b.Memory.List(ctx, f) {
			if err == nil && e.State != sched.StateAwaiting && e.State != sched.StateRunning {
				selected++
			}
		}
	}
	n, err := b.Memory.Retry(ctx, b.filtered("retry", f), reset, now)
	if b.kind == "retryCountsSelected" {
		n = selected
	}
	return n, err
}

func (b *mutant) Delete(ctx context.Context, f sched.Filter[P, string]) (int, error) {
	if b.kind == "deleteOnlyFinal" && len(f.States) == 0 { // an operator's purge of the error queue, say
		f.States = []sched.State{sched.StateSucceeded, sched.StateFailed, sched.StateCancelled, sched.StatePoisoned}
	}
	return b.Memory.Delete(ctx, b.filtered("delete", f))
}

func (b *mutant) Counts(ctx context.Context) (sched.Counts, error) {
	c, err := b.Memory.Counts(ctx)
	switch b.kind {
	case "disabledCountKept":
		c.Disabled = int(b.disabled.Load())
	case "totalsLeftOut": // counted by state alone, the totals made up to fit
		c.Added, c.Expired, c.Deleted = c.Live()+c.Retained(), 0, 0
	case "totalsSwapped":
		c.Expired, c.Deleted = c.Deleted, c.Expired
	}
	return c, err
}

func (b *mutant) SetDisabled(ctx context.Context, id sched.ID, d bool) error {
	defer b.allowing()()
	e, _ := b.Memory.Get(ctx, id)
	err := b.Memory.SetDisabled(ctx, id, d)
	if err == nil && e.Disabled != d {
		if d {
			b.disabled.Add(1)
		} else {
			b.disabled.Add(-1)
		}
	}
	return err
}

func (b *mutant) Take(ctx context.Context, s *scope.Scope, r sched.TakeRequest, dst []sched.Claim[P, string]) ([]sched.Claim[P, string], error) {
	n := len(dst)
	dst, err := b.Memory.Take(ctx, s, r, dst)
	if b.kind == "claimsWithoutPayload" {
		for i := n; i < len(dst); i++ {
			dst[i].Payload, dst[i].Retry = P{}, nil
		}
	}
	return dst, err
}

func (b *mutant) Start(ctx context.Context, c *sched.Claim[P, string], now, leaseUntil time.Time) error {
	if err := b.refuseDone(ctx); err != nil {
		return err
	}
	if b.kind == "startedAtDropped" {
		now = time.Time{} // the entry's StartedAt is lost
	}
	if b.kind == "startIgnoresLease" {
		leaseUntil = time.Time{} // the take's lease stays
	}
	return b.Memory.Start(ctx, c, now, leaseUntil)
}

func (b *mutant) Progress(ctx context.Context, id sched.ID, gen uint64, p sched.Progress) error {
	if err := b.refuseDone(ctx); err != nil {
		return err
	}
	if b.kind == "progressDropped" {
		p = sched.Progress{} // fenced as it should be, but the report is lost
	}
	if b.kind == "staleProgressRecorded" {
		gen = b.liveGen(ctx, id, gen)
	}
	return b.Memory.Progress(ctx, id, gen, p)
}

// refuseDone, for the mutant refusesDoneContext, refuses a done context
// as a backend that checks ctx first would: the scheduler settles the runs
// StopAndCancel ends under their cancelled contexts.
func (b *mutant) refuseDone(ctx context.Context) error {
	if b.kind == "refusesDoneContext" && ctx != nil {
		return ctx.Err()
	}
	return nil
}

// liveGen returns the generation of entry id's run if it is awaiting or
// running, else gen: a backend that forgets to compare generations.
func (b *mutant) liveGen(ctx context.Context, id sched.ID, gen uint64) uint64 {
	if e, err := b.Memory.Get(ctx, id); err == nil && (e.State == sched.StateAwaiting || e.State == sched.StateRunning) {
		return e.Gen
	}
	return gen
}

func (b *mutant) Settle(ctx context.Context, c *sched.Claim[P, string], o sched.Outcome) error {
	if err := b.refuseDone(ctx); err != nil {
		return err
	}
	if b.kind == "rescueAlwaysStale" && !o.LapsedBefore.IsZero() {
		return sched.ErrStale // never rescues another process's claim
	}
	err := b.Memory.Settle(ctx, c, o)
	if b.kind == "settleLosesSuccesses" && err == nil && o.Kind == sched.OutcomeSucceeded {
		b.Memory.Delete(ctx, sched.Filter[P, string]{After: c.ID - 1, Until: c.ID})
	}
	return err
}

func (b *mutant) Renew(ctx context.Context, id sched.ID, gen uint64, until time.Time) error {
	if err := b.refuseDone(ctx); err != nil {
		return err
	}
	if b.kind == "staleRenewAccepted" {
		gen = b.liveGen(ctx, id, gen)
	}
	return b.Memory.Renew(ctx, id, gen, until)
}

func (b *mutant) Expired(ctx context.Context, now time.Time, dst []sched.Claim[P, string]) ([]sched.Claim[P, string], error) {
	n := len(dst)
	if b.kind == "expiredAtTheCutoff" {
		now = now.Add(time.Nanosecond) // a lease ending at now counts as ended before it
	}
	dst, err := b.Memory.Expired(ctx, now, dst)
	if b.kind == "expiredSkipsRunning" {
		kept := dst[:n]
		for _, c := range dst[n:] {
			if e, _ := b.Memory.Get(ctx, c.ID); e.State != sched.StateRunning {
				kept = append(kept, c)
			}
		}
		dst = kept
	}
	return dst, err
}

func (b *mutant) List(ctx context.Context, f sched.Filter[P, string]) iter.Seq2[sched.Entry[P, string], error] {
	if b.kind != "listSkipsOne" {
		return b.Memory.List(ctx, f)
	}
	return func(yield func(sched.Entry[P, string], error) bool) {
		n := 0
		for e, err := range b.Memory.List(ctx, f) {
			if n++; n == 2 {
				continue // the second entry of every listing
			}
			if !yield(e, err) {
				return
			}
		}
	}
}

func (b *mutant) Get(ctx context.Context, id sched.ID) (sched.Entry[P, string], error) {
	e, err := b.Memory.Get(ctx, id)
	if b.kind == "getWithoutPayload" {
		e.Payload = P{}
	}
	return e, err
}

// The conformance suite must reject each mutant: each breaks a clause of
// the Backend contract the scheduler relies on. It runs in a child process
// (so that the suite's failure is this test's success).
func TestSuiteRejectsBrokenBackends(t *testing.T) {
	if k := os.Getenv("SCHEDTEST_MUTANT"); k != "" {
		schedtest.TestBackend(t, func(*testing.T) sched.Backend[P, string] {
			return &mutant{Memory: sched.NewMemory[P, string](), kind: k}
		})
		return
	}
	// The control: Memory through the wrapper, unbroken, passes.
	t.Run("control", func(t *testing.T) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSuiteRejectsBrokenBackends$", "-test.count=1")
		cmd.Env = append(os.Environ(), "SCHEDTEST_MUTANT=none")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the unbroken wrapper fails the suite: %v\n%s", err, out)
		}
	})
	for _, k := range []string{"muteRequeue", "claimsWithoutPayload", "startIgnoresLease", "progressDropped", "getWithoutPayload",
		"refusesDoneContext", "staleRenewAccepted", "staleProgressRecorded", "rescueAlwaysStale", "expiredSkipsRunning",
		"maxZeroKeepsAll", "startedAtDropped", "expiredAtTheCutoff",
		"deleteIgnoresStates", "deleteOnlyFinal", "deleteIgnoresKey", "deleteIgnoresTime", "deleteIgnoresMatch", "deleteIgnoresAfter",
		"retryIgnoresKey", "retryIgnoresTime", "retryIgnoresMatch", "retryCountsSelected", "disabledCountKept",
		"totalsLeftOut", "totalsSwapped", "groupsIgnorePriority",
		"takeIgnoresPriority", "settleLosesSuccesses", "listSkipsOne"} {
		t.Run(k, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestSuiteRejectsBrokenBackends$", "-test.count=1")
			cmd.Env = append(os.Environ(), "SCHEDTEST_MUTANT="+k)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Errorf("schedtest.TestBackend passes a backend that breaks the contract (%s):\n%s", k, out)
			}
		})
	}
}
