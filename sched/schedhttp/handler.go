package schedhttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/jobkit/jobkit/internal/errchain"
	"github.com/jobkit/jobkit/sched"
)

// Options configures a Handler. The zero Options serves the read-only API
// with the defaults below.
type Options struct {
	// AllowWrites enables the routes that change entries and queues:
	// delete, retry, pause, resume, disable and enable. Defaults to false:
	// they answer 403.
	AllowWrites bool

	// MaxPage is the most entries one GET /entries answers with, and the
	// page size when the request gives no limit. Defaults to 100; at most
	// 1000.
	MaxPage int

	// MaxBody is the largest request body accepted, in bytes; a larger one
	// is answered 413 without being read past the limit. Only POST /retry
	// and POST /delete take a body. Defaults to 64 KiB.
	MaxBody int64

	// Logger receives a record of every write (at Info), of failures (at
	// Warn and Error) and of payloads that could not be encoded (at Debug).
	// Defaults to slog.Default(). A handler of it that panics or calls
	// runtime.Goexit loses the record it was given, and nothing else: the
	// request is still answered.
	Logger *slog.Logger

	// CrossOrigin guards the write routes against cross-site requests from
	// browsers (CSRF): a request its Check refuses is answered with a JSON
	// 403 (its deny handler is not used). Defaults to a zero
	// http.CrossOriginProtection, which refuses cross-origin browser
	// requests and lets non-browser clients, which send neither
	// Sec-Fetch-Site nor Origin, through.
	CrossOrigin *http.CrossOriginProtection
}

// Defaults and bounds of Options.
const (
	// DefaultMaxPage is Options.MaxPage when it is zero.
	DefaultMaxPage = 100
	// MaxMaxPage is the largest Options.MaxPage: a page never holds more
	// entries than this.
	MaxMaxPage = 1000
	// DefaultMaxBody is Options.MaxBody when it is zero, in bytes.
	DefaultMaxBody = 64 << 10
)

// Handler serves a scheduler's Inspector as JSON over HTTP; the package
// documentation lists its routes. It is made by New and safe for
// concurrent use; it holds no state of its own between requests. A
// Handler not made by New (the zero Handler, or a nil *Handler) answers
// every request 500 with an error saying so.
type Handler struct {
	insp    *sched.Inspector
	opts    Options
	log     *slog.Logger
	mux     *http.ServeMux
	maxBody int64
}

// New returns a Handler serving insp. It returns an error wrapping
// sched.ErrInvalid for a nil insp, one not made by Scheduler.Inspector
// (the zero Inspector, or that of a Scheduler not made by sched.New),
// whose every call would fail, or an out-of-range option.
func New(insp *sched.Inspector, opts Options) (*Handler, error) {
	switch {
	case insp == nil:
		return nil, fmt.Errorf("%w: schedhttp: nil Inspector", sched.ErrInvalid)
	case opts.MaxPage < 0 || opts.MaxPage > MaxMaxPage:
		return nil, fmt.Errorf("%w: schedhttp: MaxPage %d not in [0, %d]", sched.ErrInvalid, opts.MaxPage, MaxMaxPage)
	case opts.MaxBody < 0:
		return nil, fmt.Errorf("%w: schedhttp: MaxBody %d < 0", sched.ErrInvalid, opts.MaxBody)
	}
	if err := notMade(insp); err != nil {
		return nil, fmt.Errorf("schedhttp: an Inspector not made by Scheduler.Inspector: %w", err)
	}
	if opts.MaxPage == 0 {
		opts.MaxPage = DefaultMaxPage
	}
	if opts.MaxBody == 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	opts.Logger = guardLogger(opts.Logger)
	if opts.CrossOrigin == nil {
		opts.CrossOrigin = new(http.CrossOriginProtection)
	}
	h := &Handler{insp: insp, opts: opts, log: opts.Logger, mux: http.NewServeMux(), maxBody: opts.MaxBody}
	h.routes()
	return h, nil
}

// notMade returns the error, wrapping sched.ErrInvalid, of an Inspector
// not made by Scheduler.Inspector, or nil. Such an Inspector fails every
// call with it before it looks at its arguments; one that was made
// answers a summary of the queue named "" with sched.ErrUnknownQueue (a
// name has 1 to 200 bytes), from its map of queues, reading no entry.
func notMade(insp *sched.Inspector) error {
	_, err := insp.Summary(context.Background(), "")
	if errors.Is(err, sched.ErrInvalid) {
		return err
	}
	return nil
}

// errHandlerNotMade is the answer of a Handler not made by New.
var errHandlerNotMade = errors.New("schedhttp: a Handler not made by New (the zero Handler, or a nil *Handler)")

// route is one method and path the handler serves.
type route struct {
	method, path string
	write        bool // changes entries or queues: only with AllowWrites
	body         bool // may carry a body
	serve        http.HandlerFunc
}

func (h *Handler) routes() {
	rs := []route{
		{"GET", "/queues", false, false, h.queues},
		{"GET", "/queues/{queue}", false, false, h.queue},
		{"POST", "/queues/{queue}/pause", true, false, h.pause(true)},
		{"POST", "/queues/{queue}/resume", true, false, h.pause(false)},
		{"GET", "/entries", false, false, h.list},
		{"GET", "/count", false, false, h.count},
		{"POST", "/retry", true, true, h.retryFilter},
		{"POST", "/delete", true, true, h.deleteFilter},
		{"GET", "/entries/{queue}/{id}", false, false, h.get},
		{"DELETE", "/entries/{queue}/{id}", true, false, h.deleteOne},
		{"POST", "/entries/{queue}/{id}/retry", true, false, h.retryOne},
		{"POST", "/entries/{queue}/{id}/disable", true, false, h.disable(true)},
		{"POST", "/entries/{queue}/{id}/enable", true, false, h.disable(false)},
	}
	allowed := map[string][]string{}
	var paths []string
	for _, rt := range rs {
		if allowed[rt.path] == nil {
			paths = append(paths, rt.path)
		}
		allowed[rt.path] = append(allowed[rt.path], rt.method)
		h.mux.Handle(rt.method+" "+rt.path, h.guard(rt))
	}
	// The same paths with any other method: 405, in JSON.
	for _, p := range paths {
		ms := allowed[p]
		if slices.Contains(ms, "GET") {
			ms = append(ms, "HEAD")
		}
		allow := strings.Join(ms, ", ")
		h.mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			h.answer(w, r, http.StatusMethodNotAllowed, errorBody{Error: fmt.Sprintf("method %s not allowed on %s: use %s", r.Method, p, allow)})
		})
	}
	h.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.answer(w, r, http.StatusNotFound, errorBody{Error: fmt.Sprintf("no route %s %s", r.Method, r.URL.Path)})
	})
}

// guard checks what every request of rt must satisfy before rt serves it:
// writes allowed, no cross-site browser request for a write, no body where
// none is taken, and bodies limited to MaxBody.
func (h *Handler) guard(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rt.write {
			if !h.opts.AllowWrites {
				h.fail(w, r, &badRequest{http.StatusForbidden, fmt.Sprintf("writes are disabled: %s %s needs a handler made with Options.AllowWrites", rt.method, rt.path)})
				return
			}
			if err := h.opts.CrossOrigin.Check(r); err != nil {
				h.fail(w, r, &badRequest{http.StatusForbidden, "cross-origin request refused: " + err.Error()})
				return
			}
		}
		if !rt.body && hasBody(r) {
			h.fail(w, r, bad("%s %s takes no body: give its parameters in the query string", rt.method, rt.path))
			return
		}
		if rt.body {
			r2 := *r
			r2.Body = http.MaxBytesReader(w, r.Body, h.maxBody)
			r = &r2
		}
		rt.serve(w, r)
	})
}

// ServeHTTP serves the request. A body declared larger than Options.MaxBody
// is refused with 413 before anything is read. A path that is not clean
// (the empty path, or one with an empty, "." or ".." segment) is no route:
// it is answered 404, not redirected.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h == nil || h.mux == nil {
		// It has no Logger, no MaxBody, no routes: say so, to the
		// client and in the default log.
		slog.Error("schedhttp: request failed", "method", r.Method, "path", r.URL.Path, "status", http.StatusInternalServerError, "err", errHandlerNotMade)
		header(w)
		w.WriteHeader(http.StatusInternalServerError)
		_ = json.NewEncoder(w).Encode(errorBody{Error: errHandlerNotMade.Error()})
		return
	}
	if r.ContentLength > h.maxBody {
		h.fail(w, r, &badRequest{http.StatusRequestEntityTooLarge, fmt.Sprintf("body of %d bytes is larger than %d", r.ContentLength, h.maxBody)})
		return
	}
	// http.ServeMux would answer it with a 307 to the clean path, which a
	// client following redirects repeats with its method and body, and
	// which, behind http.StripPrefix, leads out of the API.
	if p := r.URL.EscapedPath(); cleanPath(p) != p {
		h.answer(w, r, http.StatusNotFound, errorBody{Error: fmt.Sprintf("no route %s %s: a path with an empty, \".\" or \"..\" segment is not served", r.Method, r.URL.Path)})
		return
	}
	h.mux.ServeHTTP(w, r)
}

// cleanPath returns p as http.ServeMux cleans it before routing: rooted,
// without empty, "." or ".." segments, keeping a trailing slash.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if strings.HasSuffix(p, "/") && np != "/" {
		np += "/"
	}
	return np
}

// errorBody is the answer to a request that failed, with how many entries a
// write by filter changed before it failed.
type errorBody struct {
	Error   string `json:"error"`
	Deleted *int   `json:"deleted,omitempty"`
	Retried *int   `json:"retried,omitempty"`
}

// status returns the HTTP status of err. An error that wraps itself (a
// custom backend's) is not searched: errors.Is would walk it for ever.
func status(err error) int {
	var br *badRequest
	switch {
	case errchain.Long(err, errchain.Max):
		return http.StatusInternalServerError
	case errors.As(err, &br):
		return br.status
	case errors.Is(err, sched.ErrUnknownQueue), errors.Is(err, sched.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, sched.ErrWrongState):
		return http.StatusConflict
	case errors.Is(err, sched.ErrInvalid):
		return http.StatusBadRequest
	case errors.Is(err, sched.ErrStopped), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// fail answers r with err.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	h.failWith(w, r, err, errorBody{})
}

// failWith answers r with err in body.
func (h *Handler) failWith(w http.ResponseWriter, r *http.Request, err error, body errorBody) {
	code := status(err)
	switch {
	case code >= 500 && r.Context().Err() == nil:
		h.log.Error("schedhttp: request failed", "method", r.Method, "path", r.URL.Path, "status", code, "err", err)
	case code >= 500:
		h.log.Debug("schedhttp: request cancelled", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	body.Error = err.Error()
	h.answer(w, r, code, body)
}

// header sets the headers of every JSON answer.
func header(w http.ResponseWriter) {
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
}

// answer writes v as JSON with status code.
func (h *Handler) answer(w http.ResponseWriter, r *http.Request, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		h.log.Error("schedhttp: cannot encode answer", "method", r.Method, "path", r.URL.Path, "err", err)
		code = http.StatusInternalServerError
		b, _ = json.Marshal(errorBody{Error: "cannot encode answer: " + err.Error()})
	}
	header(w)
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}

func (h *Handler) ok(w http.ResponseWriter, r *http.Request, v any) {
	h.answer(w, r, http.StatusOK, v)
}
