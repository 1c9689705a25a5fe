package schedhttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jobkit/jobkit/sched"
)

// Limits on what a request may ask for. A request past one is answered 400.
const (
	// MaxQueues is the most queue names a filter may name.
	MaxQueues = 64
	// MaxPrefix is the longest key prefix a filter may hold, in bytes.
	MaxPrefix = 1 << 10
	// MaxQuery is the longest query string a request may carry, in bytes.
	MaxQuery = 64 << 10
)

const (
	maxStates = 8   // as many as there are states
	maxCursor = 256 // a queue name (at most 200 bytes), a slash and an ID
)

// The query parameters.
const (
	pQueue    = "queue"
	pState    = "state"
	pPrefix   = "prefix"
	pFrom     = "from"
	pTo       = "to"
	pAfter    = "after"
	pLimit    = "limit"
	pPayloads = "payloads"
	pReset    = "reset"
)

// The parameters each kind of route takes.
var (
	filterParams = []string{pQueue, pState, pPrefix, pFrom, pTo}
	listParams   = append(slices.Clone(filterParams), pAfter, pLimit, pPayloads)
	retryParams  = append(slices.Clone(filterParams), pReset)
)

// badRequest is a request the handler refuses: the message is the client's
// to read, status the answer (400 unless said otherwise).
type badRequest struct {
	status int
	msg    string
}

func (e *badRequest) Error() string { return e.msg }

func bad(format string, args ...any) error {
	return &badRequest{http.StatusBadRequest, fmt.Sprintf(format, args...)}
}

// params are a request's parameters, checked against what its route takes.
type params url.Values

// parseQuery parses raw, refusing malformed encodings and parameters that
// are not in allowed.
func parseQuery(raw string, allowed []string) (params, error) {
	if len(raw) > MaxQuery {
		return nil, bad("query string of %d bytes is longer than %d", len(raw), MaxQuery)
	}
	v, err := url.ParseQuery(raw)
	if err != nil {
		return nil, bad("malformed query string: %v", err)
	}
	return checkNames(v, allowed)
}

func checkNames(v url.Values, allowed []string) (params, error) {
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range v {
			if !yield(k) {
				return
			}
		}
	}) {
		if !slices.Contains(allowed, name) {
			if len(allowed) == 0 {
				return nil, bad("unknown parameter %q: this route takes none", name)
			}
			return nil, bad("unknown parameter %q: this route takes %s", name, strings.Join(allowed, ", "))
		}
	}
	return params(v), nil
}

// one returns the single value of name, or "" and false if it is absent.
func (p params) one(name string) (string, bool, error) {
	vs := p[name]
	switch len(vs) {
	case 0:
		return "", false, nil
	case 1:
		return vs[0], true, nil
	}
	return "", false, bad("%s: %d values given, at most one allowed", name, len(vs))
}

func (p params) bool(name string) (bool, error) {
	s, ok, err := p.one(name)
	if err != nil || !ok {
		return false, err
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, bad("%s: %q is not true or false", name, s)
	}
	return b, nil
}

func (p params) time(name string) (time.Time, error) {
	s, ok, err := p.one(name)
	if err != nil || !ok {
		return time.Time{}, err
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		hint := ""
		if strings.Contains(s, " ") {
			hint = " (a + in a query string is a space: escape it as %2B)"
		}
		return time.Time{}, bad("%s: %q is not an RFC 3339 time such as 2006-01-02T15:04:05Z%s", name, s, hint)
	}
	return t, nil
}

// filter returns the sched.Query of the filter parameters, and whether it
// selects by anything.
func (p params) filter() (sched.Query, error) {
	var q sched.Query
	if qs := p[pQueue]; len(qs) > MaxQueues {
		return q, bad("%s: %d names given, at most %d allowed", pQueue, len(qs), MaxQueues)
	} else {
		for _, name := range qs {
			if name == "" {
				return q, bad("%s: empty queue name", pQueue)
			}
		}
		q.Queues = qs
	}
	if ss := p[pState]; len(ss) > maxStates {
		return q, bad("%s: %d states given, at most %d allowed", pState, len(ss), maxStates)
	} else {
		for _, name := range ss {
			st, err := sched.ParseState(name)
			if err != nil {
				return q, bad("%s: unknown state %q: want delayed, pending, awaiting, running, succeeded, failed, cancelled or poisoned", pState, name)
			}
			q.States = append(q.States, st)
		}
	}
	prefix, _, err := p.one(pPrefix)
	if err != nil {
		return q, err
	}
	if len(prefix) > MaxPrefix {
		return q, bad("%s: %d bytes, at most %d allowed", pPrefix, len(prefix), MaxPrefix)
	}
	q.KeyPrefix = prefix
	if q.From, err = p.time(pFrom); err != nil {
		return q, err
	}
	if q.To, err = p.time(pTo); err != nil {
		return q, err
	}
	if _, given := p[pTo]; given && q.To.IsZero() {
		// sched.Query reads a zero To as no bound, which would select
		// every entry where the client asked for those enqueued before
		// the year 1: none. The instant just before it selects what was
		// asked for, and counts as a filter for a write.
		q.To = q.To.Add(-time.Nanosecond)
	}
	if !q.From.IsZero() && !q.To.IsZero() && q.To.Before(q.From) {
		return q, bad("%s %s is before %s %s", pTo, q.To.Format(time.RFC3339Nano), pFrom, q.From.Format(time.RFC3339Nano))
	}
	return q, nil
}

// narrow reports whether q selects by anything but position.
func narrow(q *sched.Query) bool {
	return len(q.Queues) > 0 || len(q.States) > 0 || q.KeyPrefix != "" || !q.From.IsZero() || !q.To.IsZero()
}

// listing returns the query, page size and whether payloads were asked
// for, of a list request.
func (p params) listing(maxPage int) (sched.Query, int, error) {
	q, err := p.filter()
	if err != nil {
		return q, 0, err
	}
	after, _, err := p.one(pAfter)
	if err != nil {
		return q, 0, err
	}
	if len(after) > maxCursor {
		return q, 0, bad("%s: %d bytes, at most %d allowed", pAfter, len(after), maxCursor)
	}
	if q.After, err = sched.ParseCursor(after); err != nil {
		return q, 0, bad("%s: %q is not a cursor (queue/id, as next gives it)", pAfter, after)
	}
	limit := maxPage
	if s, ok, err := p.one(pLimit); err != nil {
		return q, 0, err
	} else if ok {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxPage {
			return q, 0, bad("%s: %q is not an integer in [1, %d]", pLimit, s, maxPage)
		}
		limit = n
	}
	if q.Payloads, err = p.bool(pPayloads); err != nil {
		return q, 0, err
	}
	return q, limit, nil
}

// parseID parses an entry ID from a path.
func parseID(s string) (sched.ID, error) {
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil || id == 0 {
		return 0, bad("entry id %q is not a positive integer", s)
	}
	return sched.ID(id), nil
}

// filterBody is the JSON body POST /retry and POST /delete may carry
// instead of query parameters.
type filterBody struct {
	Queue  []string `json:"queue"`
	State  []string `json:"state"`
	Prefix *string  `json:"prefix"`
	From   *string  `json:"from"`
	To     *string  `json:"to"`
	Reset  *bool    `json:"reset"`
}

// hasBody reports whether r carries a body, or may.
func hasBody(r *http.Request) bool { return r.ContentLength != 0 }

// writeParams returns the parameters of a write by filter: from the query
// string, or from a JSON body (read through a MaxBytesReader of the
// handler's limit), not both.
func writeParams(r *http.Request, allowed []string) (params, error) {
	if !hasBody(r) {
		return parseQuery(r.URL.RawQuery, allowed)
	}
	if r.URL.RawQuery != "" {
		return nil, bad("give the filter in the query string or in the body, not both")
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return nil, &badRequest{http.StatusUnsupportedMediaType, "a body must be JSON (Content-Type: application/json)"}
	}
	data, err := io.ReadAll(r.Body) // at most MaxBody: r.Body is a MaxBytesReader
	if err != nil {
		return nil, bodyError(err)
	}
	if err := checkFields(data); err != nil {
		return nil, err
	}
	var b filterBody
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return nil, bodyError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err == nil {
			err = errors.New("more than one JSON value")
		}
		return nil, bodyError(err)
	}
	v := url.Values{}
	if b.Queue != nil {
		v[pQueue] = b.Queue
	}
	if b.State != nil {
		v[pState] = b.State
	}
	for name, s := range map[string]*string{pPrefix: b.Prefix, pFrom: b.From, pTo: b.To} {
		if s != nil {
			v.Set(name, *s)
		}
	}
	if b.Reset != nil {
		v.Set(pReset, strconv.FormatBool(*b.Reset))
	}
	return checkNames(v, allowed)
}

// bodyError describes an error reading a JSON body.
func bodyError(err error) error {
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return &badRequest{http.StatusRequestEntityTooLarge, fmt.Sprintf("body larger than %d bytes", mb.Limit)}
	}
	return bad("malformed JSON body: %v", err)
}

// bodyFields are the names of filterBody's fields in JSON, from its tags.
var bodyFields = func() []string {
	t := reflect.TypeFor[filterBody]()
	names := make([]string, t.NumField())
	for i := range names {
		names[i], _, _ = strings.Cut(t.Field(i).Tag.Get("json"), ",")
	}
	return names
}()

// checkFields refuses a JSON body whose object names a field twice or by
// other than its exact name. encoding/json would take the last of repeated
// fields and match names regardless of case ("Queue", "QUEUE", even
// "ſtate" for state), so that {"queue":["a"],"queue":["b"]} would delete
// from b alone, silently, and a body could use names the query string
// refuses. Anything else malformed is left to the decoder to report.
func checkFields(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		name, _ := tok.(string)
		switch {
		case !slices.Contains(bodyFields, name):
			return bad("malformed JSON body: unknown field %q (fields: %s)", name, strings.Join(bodyFields, ", "))
		case seen[name]:
			return bad("malformed JSON body: field %q given more than once", name)
		}
		seen[name] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil
		}
	}
	return nil
}
