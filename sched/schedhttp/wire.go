package schedhttp

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync"
	"time"

	"github.com/jobkit/jobkit/internal/isolate"
	"github.com/jobkit/jobkit/internal/panicval"
	"github.com/jobkit/jobkit/sched"
)

// The JSON documents the handler serves. They are exported so that Go
// clients can decode them; each field's JSON name is in its tag.

// Page is the answer to GET /entries: one page of a listing, at most the
// limit asked for. Next, if not empty, is the cursor to ask for the next
// page with (after=Next); it is empty when the listing ended. Error, if not
// empty, says why the page ended early, after the response had started
// (a backend failed, the request was cancelled): Next then resumes after
// the last entry listed.
type Page struct {
	Entries []Entry `json:"entries"`
	Next    string  `json:"next"`
	Error   string  `json:"error,omitempty"`
}

// Entry is one entry of a queue as the handler serves it: a sched.Summary
// with its state by name, its key as text and its times in UTC. Payload
// holds the payload as JSON when it was asked for (always for GET
// /entries/{queue}/{id}); if the payload could not be encoded (a channel, a
// func, a NaN, a MarshalJSON that failed, panicked or called
// runtime.Goexit), Payload is absent and PayloadError says why.
type Entry struct {
	Queue        string          `json:"queue"`
	ID           sched.ID        `json:"id"`
	Key          string          `json:"key"`
	State        string          `json:"state"`
	Disabled     bool            `json:"disabled,omitempty"`
	Priority     int             `json:"priority"`
	Group        string          `json:"group,omitempty"`
	EnqueuedAt   time.Time       `json:"enqueuedAt,omitzero"`
	RunAt        time.Time       `json:"runAt,omitzero"`
	StartedAt    time.Time       `json:"startedAt,omitzero"`
	FinishedAt   time.Time       `json:"finishedAt,omitzero"`
	Attempts     int             `json:"attempts"`
	Reruns       int             `json:"reruns"`
	Rescues      int             `json:"rescues"`
	Snoozes      int             `json:"snoozes"`
	Progress     Progress        `json:"progress,omitzero"`
	Errors       []RunError      `json:"errors,omitempty"`
	Payload      json.RawMessage `json:"payload,omitempty"`
	PayloadError string          `json:"payloadError,omitempty"`
}

// Progress is what a handler last reported of a run (sched.Progress).
type Progress struct {
	Done  int64  `json:"done"`
	Total int64  `json:"total"`
	Note  string `json:"note,omitempty"`
}

// RunError describes one failed run of an entry (sched.RunError).
type RunError struct {
	Attempt int       `json:"attempt"`
	At      time.Time `json:"at,omitzero"`
	Message string    `json:"message"`
	Type    string    `json:"type"`
	Panic   bool      `json:"panic,omitempty"`
	Stack   string    `json:"stack,omitempty"`
}

// QueueSummary describes one queue (sched.QueueSummary): its limits, its
// counts by state and, over the last minute, the runs that succeeded and
// failed, the throughput in runs a second and the share of runs that
// failed. OldestPendingSeconds is the age of its oldest pending entry (0:
// none), counted from its add (see sched.QueueSummary's OldestPending).
// Ended counts the runs that ended, by any outcome, since the scheduler
// was made, not over the last minute alone: one that stands still while
// entries wait says that no run frees a slot (see sched.QueueSummary's
// Ended).
type QueueSummary struct {
	Name                 string  `json:"name"`
	Priority             int     `json:"priority"`
	Paused               bool    `json:"paused"`
	MaxConcurrency       int     `json:"maxConcurrency"`
	Rate                 float64 `json:"rate"`
	Counts               Counts  `json:"counts"`
	OldestPendingSeconds float64 `json:"oldestPendingSeconds"`
	Succeeded            int     `json:"succeeded"`
	Failed               int     `json:"failed"`
	Ended                uint64  `json:"ended"`
	Throughput           float64 `json:"throughput"`
	FailureRate          float64 `json:"failureRate"`
}

// Counts are a queue's numbers of entries by state, and its totals of
// entries added, expired and deleted (sched.Counts).
type Counts struct {
	Delayed   int `json:"delayed"`
	Pending   int `json:"pending"`
	Awaiting  int `json:"awaiting"`
	Running   int `json:"running"`
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
	Cancelled int `json:"cancelled"`
	Poisoned  int `json:"poisoned"`
	Disabled  int `json:"disabled"`
	Added     int `json:"added"`
	Expired   int `json:"expired"`
	Deleted   int `json:"deleted"`
}

// utc returns t in UTC, keeping the zero time zero.
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}

// finite returns f, or 0 if it is NaN or infinite, which JSON cannot hold.
func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

// newEntry returns the wire form of s without its payload.
func newEntry(s *sched.Summary) Entry {
	e := Entry{
		Queue: s.Queue, ID: s.ID, Key: s.Key, State: s.State.String(), Disabled: s.Disabled,
		Priority: s.Priority, Group: s.Group, EnqueuedAt: utc(s.EnqueuedAt), RunAt: utc(s.RunAt),
		StartedAt: utc(s.StartedAt), FinishedAt: utc(s.FinishedAt),
		Attempts: s.Attempts, Reruns: s.Reruns, Rescues: s.Rescues, Snoozes: s.Snoozes,
		Progress: Progress{s.Progress.Done, s.Progress.Total, s.Progress.Note},
	}
	if len(s.Errors) > 0 {
		e.Errors = make([]RunError, len(s.Errors))
		for i, x := range s.Errors {
			e.Errors[i] = RunError{x.Attempt, utc(x.At), x.Message, x.Type, x.Panic, x.Stack}
		}
	}
	return e
}

func newQueueSummary(q *sched.QueueSummary) QueueSummary {
	c := q.Counts
	return QueueSummary{
		Name: q.Name, Priority: q.Priority, Paused: q.Paused, MaxConcurrency: q.MaxConcurrency,
		Rate: finite(q.Rate),
		Counts: Counts{
			c.Delayed, c.Pending, c.Awaiting, c.Running, c.Succeeded, c.Failed, c.Cancelled,
			c.Poisoned, c.Disabled, c.Added, c.Expired, c.Deleted,
		},
		OldestPendingSeconds: finite(q.OldestPending.Seconds()),
		Succeeded:            q.Succeeded, Failed: q.Failed, Ended: q.Ended,
		Throughput: finite(q.Throughput), FailureRate: finite(q.FailureRate),
	}
}

// entryEncoder encodes entries one at a time into a buffer it reuses, so
// that a listing holds one entry's JSON at a time.
type entryEncoder struct {
	e         Entry // reused: encoding it does not allocate it again
	buf, pbuf bytes.Buffer
	enc, penc *json.Encoder
}

func newEntryEncoder() *entryEncoder {
	e := &entryEncoder{}
	e.enc = json.NewEncoder(&e.buf)
	e.penc = json.NewEncoder(&e.pbuf)
	return e
}

// encode encodes s, with its payload if payload, followed by a newline, and
// returns the JSON, valid until the next call, and the error that kept the
// payload out, if any. It never fails: a payload that cannot be encoded is
// replaced by a note, and so, as a last resort, is an entry.
func (x *entryEncoder) encode(s *sched.Summary, payload bool) ([]byte, error) {
	e := &x.e
	*e = newEntry(s)
	var perr error
	if payload {
		if perr = x.payload(s.Payload); perr == nil {
			e.Payload = bytes.TrimSuffix(x.pbuf.Bytes(), []byte("\n"))
		} else {
			e.PayloadError = perr.Error()
		}
	}
	x.buf.Reset()
	if err := x.enc.Encode(e); err != nil {
		// Not expected: everything but the payload is text, numbers and
		// times in range. Say so rather than break the document.
		x.buf.Reset()
		perr = fmt.Errorf("entry cannot be encoded: %w", err)
		_ = x.enc.Encode(&Entry{Queue: s.Queue, ID: s.ID, State: s.State.String(), PayloadError: perr.Error()})
	}
	return x.buf.Bytes(), perr
}

// payload encodes v into x.pbuf. A panic of v's MarshalJSON is returned as
// an error, and so is a runtime.Goexit: a v whose encoding may call its
// methods is encoded on a goroutine of its own (isolate.Call), so that one
// bad payload neither takes the listing down nor ends the request's
// goroutine mid-answer. A plain v is encoded on the caller's goroutine,
// without that goroutine's cost.
func (x *entryEncoder) payload(v any) error {
	x.pbuf.Reset()
	var err error
	if !runsCode(reflect.TypeOf(v)) {
		err = x.encodePayload(v)
	} else if !isolate.Call(func() { err = x.encodePayload(v) }) {
		err = errPayloadGoexit
	}
	if err != nil {
		x.pbuf.Reset()
	}
	return err
}

// errPayloadGoexit is the error of a payload whose encoding ended its
// goroutine.
var errPayloadGoexit = errors.New("payload cannot be encoded: its encoding called runtime.Goexit")

func (x *entryEncoder) encodePayload(v any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("payload cannot be encoded: MarshalJSON panicked: %s", panicval.String(p))
		}
	}()
	if err := x.penc.Encode(v); err != nil {
		return fmt.Errorf("payload cannot be encoded: %w", err)
	}
	return nil
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	runsCodeOf        sync.Map // reflect.Type: bool, runsCode's answers
)

// runsCode reports whether encoding/json may call a method of a value of
// type t as it encodes it (MarshalJSON or MarshalText, of t or of a type
// it holds), or of a value whose type t does not tell (an interface).
func runsCode(t reflect.Type) bool {
	if t == nil {
		return false
	}
	if b, ok := runsCodeOf.Load(t); ok {
		return b.(bool)
	}
	b := runsCodeIn(t, map[reflect.Type]bool{})
	runsCodeOf.Store(t, b)
	return b
}

// runsCodeIn is runsCode of t, the types in seen being looked at already
// (a type that holds itself).
func runsCodeIn(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	pt := reflect.PointerTo(t)
	switch {
	case t.Kind() == reflect.Interface,
		t.Implements(marshalerType), pt.Implements(marshalerType),
		t.Implements(textMarshalerType), pt.Implements(textMarshalerType):
		return true
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return runsCodeIn(t.Elem(), seen)
	case reflect.Map:
		return runsCodeIn(t.Key(), seen) || runsCodeIn(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if runsCodeIn(t.Field(i).Type, seen) {
				return true
			}
		}
	}
	return false
}
