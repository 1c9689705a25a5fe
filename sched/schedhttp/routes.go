package schedhttp

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/jobkit/jobkit/sched"
)

// GET /queues
func (h *Handler) queues(w http.ResponseWriter, r *http.Request) {
	if _, err := parseQuery(r.URL.RawQuery, nil); err != nil {
		h.fail(w, r, err)
		return
	}
	qs, err := h.insp.Summaries(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := struct {
		Queues []QueueSummary `json:"queues"`
	}{make([]QueueSummary, len(qs))}
	for i := range qs {
		out.Queues[i] = newQueueSummary(&qs[i])
	}
	h.ok(w, r, out)
}

// GET /queues/{queue}
func (h *Handler) queue(w http.ResponseWriter, r *http.Request) {
	if _, err := parseQuery(r.URL.RawQuery, nil); err != nil {
		h.fail(w, r, err)
		return
	}
	qs, err := h.insp.Summary(r.Context(), r.PathValue("queue"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.ok(w, r, newQueueSummary(&qs))
}

// POST /queues/{queue}/pause and /resume
func (h *Handler) pause(paused bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if _, err := parseQuery(r.URL.RawQuery, nil); err != nil {
			h.fail(w, r, err)
			return
		}
		name := r.PathValue("queue")
		do := h.insp.Resume
		if paused {
			do = h.insp.Pause
		}
		if err := do(name); err != nil {
			h.fail(w, r, err)
			return
		}
		h.log.Info("schedhttp: queue paused or resumed", "queue", name, "paused", paused, "remote", r.RemoteAddr)
		h.ok(w, r, struct {
			Queue  string `json:"queue"`
			Paused bool   `json:"paused"`
		}{name, paused})
	}
}

// GET /count
func (h *Handler) count(w http.ResponseWriter, r *http.Request) {
	p, err := parseQuery(r.URL.RawQuery, filterParams)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	q, err := p.filter()
	if err != nil {
		h.fail(w, r, err)
		return
	}
	n, err := h.insp.Count(r.Context(), q)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.ok(w, r, struct {
		Count int `json:"count"`
	}{n})
}

// writeFilter returns the filter of a write by filter, refusing one that
// selects by nothing: it would reach every entry of every queue.
func (h *Handler) writeFilter(r *http.Request, allowed []string) (params, sched.Query, error) {
	p, err := writeParams(r, allowed)
	if err != nil {
		return nil, sched.Query{}, err
	}
	q, err := p.filter()
	if err != nil {
		return nil, q, err
	}
	if !narrow(&q) {
		return nil, q, bad("an empty filter would reach every entry: give at least one of queue, state, prefix, from, to")
	}
	return p, q, nil
}

// POST /retry
func (h *Handler) retryFilter(w http.ResponseWriter, r *http.Request) {
	p, q, err := h.writeFilter(r, retryParams)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	reset, err := p.bool(pReset)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	n, err := h.insp.Retry(r.Context(), q, reset)
	h.log.Info("schedhttp: retry by filter", logFilter(&q), "reset", reset, "retried", n, "err", err, "remote", r.RemoteAddr)
	if err != nil {
		h.failWith(w, r, err, errorBody{Retried: &n})
		return
	}
	h.ok(w, r, struct {
		Retried int `json:"retried"`
	}{n})
}

// POST /delete
func (h *Handler) deleteFilter(w http.ResponseWriter, r *http.Request) {
	_, q, err := h.writeFilter(r, filterParams)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	n, err := h.insp.Delete(r.Context(), q)
	h.log.Info("schedhttp: delete by filter", logFilter(&q), "deleted", n, "err", err, "remote", r.RemoteAddr)
	if err != nil {
		h.failWith(w, r, err, errorBody{Deleted: &n})
		return
	}
	h.ok(w, r, struct {
		Deleted int `json:"deleted"`
	}{n})
}

// logFilter describes q for the log, leaving out what it does not use.
func logFilter(q *sched.Query) slog.Attr {
	var as []any
	if len(q.Queues) > 0 {
		as = append(as, slog.Any("queues", q.Queues))
	}
	if len(q.States) > 0 {
		names := make([]string, len(q.States))
		for i, st := range q.States {
			names[i] = st.String()
		}
		as = append(as, slog.Any("states", names))
	}
	if q.KeyPrefix != "" {
		as = append(as, slog.String("prefix", q.KeyPrefix))
	}
	if !q.From.IsZero() {
		as = append(as, slog.Time("from", q.From))
	}
	if !q.To.IsZero() {
		as = append(as, slog.Time("to", q.To))
	}
	return slog.Group("filter", as...)
}

// entryPath returns the queue and ID of a route on one entry, checking that
// the query string has only the parameters allowed.
func entryPath(r *http.Request, allowed []string) (params, string, sched.ID, error) {
	p, err := parseQuery(r.URL.RawQuery, allowed)
	if err != nil {
		return nil, "", 0, err
	}
	id, err := parseID(r.PathValue("id"))
	return p, r.PathValue("queue"), id, err
}

// GET /entries/{queue}/{id}
func (h *Handler) get(w http.ResponseWriter, r *http.Request) {
	_, queue, id, err := entryPath(r, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	s, err := h.insp.Get(r.Context(), queue, id)
	if err != nil {
		h.fail(w, r, entryError(queue, id, err))
		return
	}
	b, perr := newEntryEncoder().encode(&s, true)
	if perr != nil {
		h.log.Debug("schedhttp: payload not encoded", "queue", queue, "id", id, "err", perr)
	}
	header(w)
	_, _ = w.Write(b)
}

// entryError adds the entry to err, which names neither.
func entryError(queue string, id sched.ID, err error) error {
	return fmt.Errorf("queue %q, entry %d: %w", queue, id, err)
}

// DELETE /entries/{queue}/{id}
func (h *Handler) deleteOne(w http.ResponseWriter, r *http.Request) {
	_, queue, id, err := entryPath(r, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	err = h.insp.DeleteID(r.Context(), queue, id)
	h.log.Info("schedhttp: delete", "queue", queue, "id", id, "err", err, "remote", r.RemoteAddr)
	if err != nil {
		h.fail(w, r, entryError(queue, id, err))
		return
	}
	n := 1
	h.ok(w, r, struct {
		Deleted int `json:"deleted"`
	}{n})
}

// POST /entries/{queue}/{id}/retry
func (h *Handler) retryOne(w http.ResponseWriter, r *http.Request) {
	p, queue, id, err := entryPath(r, []string{pReset})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	reset, err := p.bool(pReset)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	err = h.insp.RetryID(r.Context(), queue, id, reset)
	h.log.Info("schedhttp: retry", "queue", queue, "id", id, "reset", reset, "err", err, "remote", r.RemoteAddr)
	if err != nil {
		h.fail(w, r, entryError(queue, id, err))
		return
	}
	h.ok(w, r, struct {
		Retried int `json:"retried"`
	}{1})
}

// POST /entries/{queue}/{id}/disable and /enable
func (h *Handler) disable(disabled bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, queue, id, err := entryPath(r, nil)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		do := h.insp.Enable
		if disabled {
			do = h.insp.Disable
		}
		err = do(r.Context(), queue, id)
		h.log.Info("schedhttp: disable or enable", "queue", queue, "id", id, "disabled", disabled, "err", err, "remote", r.RemoteAddr)
		if err != nil {
			h.fail(w, r, entryError(queue, id, err))
			return
		}
		h.ok(w, r, struct {
			Queue    string   `json:"queue"`
			ID       sched.ID `json:"id"`
			Disabled bool     `json:"disabled"`
		}{queue, id, disabled})
	}
}
