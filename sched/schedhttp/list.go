package schedhttp

import (
	"encoding/json"
	"net/http"

	"github.com/jobkit/jobkit/sched"
)

// GET /entries
//
// The page is written as the Inspector yields it, one entry's JSON at a
// time: nothing proportional to the page or the listing is held. One entry
// past the page is listed to tell whether another page follows, so that
// next is empty exactly when the listing ended. The status is decided by
// the first thing the listing yields: an error before any entry (an
// unknown queue, a cancelled request) is answered with its status; one
// after the first entry ends the page with "error" set, and the document
// stays valid JSON.
func (h *Handler) list(w http.ResponseWriter, r *http.Request) {
	p, err := parseQuery(r.URL.RawQuery, listParams)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	q, limit, err := p.listing(h.opts.MaxPage)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	ctx := r.Context()
	enc := newEntryEncoder()
	var (
		n          int
		last, next sched.Cursor
		failure    error
	)
	for s, err := range h.insp.List(ctx, q) {
		if err == nil {
			// The backend looks at ctx a page at a time; look at every
			// entry, so that a client that went away stops the listing
			// at once.
			err = ctx.Err()
		}
		if err != nil {
			failure = err
			break
		}
		if n == limit {
			next = last
			break
		}
		if n == 0 {
			header(w)
			if _, err := w.Write([]byte("{\"entries\":[\n")); err != nil {
				return // the client is gone
			}
		} else if _, err := w.Write([]byte(",")); err != nil {
			return
		}
		b, perr := enc.encode(&s, q.Payloads)
		if perr != nil {
			h.log.Debug("schedhttp: payload not encoded", "queue", s.Queue, "id", s.ID, "err", perr)
		}
		if _, err := w.Write(b); err != nil {
			return
		}
		last = s.Cursor()
		n++
	}
	if n == 0 {
		if failure != nil {
			h.fail(w, r, failure)
			return
		}
		header(w)
		_, _ = w.Write([]byte("{\"entries\":[],\"next\":\"\"}\n"))
		return
	}
	tail := struct {
		Next  string `json:"next"`
		Error string `json:"error,omitempty"`
	}{Next: next.String()}
	if failure != nil {
		// Resume after the last entry written.
		tail.Next, tail.Error = last.String(), failure.Error()
		if ctx.Err() == nil {
			h.log.Warn("schedhttp: listing failed", "after", last.String(), "err", failure)
		}
	}
	b, _ := json.Marshal(tail) // strings only: cannot fail
	b[0] = ','                 // {"next":… becomes ,"next":…
	_, _ = w.Write([]byte("]"))
	_, _ = w.Write(append(b, '\n'))
}
