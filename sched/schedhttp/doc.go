// Package schedhttp serves a scheduler's management API (a
// *sched.Inspector) as JSON over HTTP: queue summaries, entries listed a
// page at a time with a cursor, counts, and, when enabled, delete, retry,
// pause, resume, disable and enable.
//
//	h, err := schedhttp.New(s.Inspector(), schedhttp.Options{AllowWrites: true})
//	...
//	mux.Handle("/jobs/", http.StripPrefix("/jobs", h))
//
// The handler has no authentication of its own: mount it behind the
// application's.
//
// # Routes
//
// Reads:
//
//	GET /queues                  {"queues":[QueueSummary…]}
//	GET /queues/{queue}          QueueSummary
//	GET /entries?filter&after=&limit=&payloads=
//	                             Page: {"entries":[Entry…],"next":"cursor"}
//	GET /count?filter            {"count":n}
//	GET /entries/{queue}/{id}    Entry, with its payload
//
// Writes, only with Options.AllowWrites (else 403):
//
//	POST   /queues/{queue}/pause          {"queue":"q","paused":true}
//	POST   /queues/{queue}/resume         {"queue":"q","paused":false}
//	POST   /retry?filter&reset=           {"retried":n}
//	POST   /delete?filter                 {"deleted":n}
//	POST   /entries/{queue}/{id}/retry?reset=  {"retried":1}
//	DELETE /entries/{queue}/{id}          {"deleted":1}
//	POST   /entries/{queue}/{id}/disable  {"queue":"q","id":7,"disabled":true}
//	POST   /entries/{queue}/{id}/enable   {"queue":"q","id":7,"disabled":false}
//
// A filter is made of these query parameters, all optional:
//
//	queue=NAME     the entries of the queue; repeat for several (at most 64)
//	state=STATE    in the state: delayed, pending, awaiting, running,
//	               succeeded, failed, cancelled or poisoned; repeat for several
//	prefix=TEXT    whose key, as text, starts with TEXT (at most 1 KiB)
//	from=TIME      enqueued at or after TIME (RFC 3339, e.g. 2025-01-02T15:04:05Z)
//	to=TIME        enqueued before TIME
//
// A listing also takes after=CURSOR (list from after it: the next of the
// previous page), limit=N (at most N entries, 1 to Options.MaxPage, which is
// also the default) and payloads=true (include payloads). A retry takes
// reset=true to set the entries' attempts back to zero (default: keep them).
// POST /retry and POST /delete refuse an empty filter, which would reach
// every entry, and accept their filter as a JSON body instead of the query
// string:
//
//	{"queue":["mail"],"state":["failed"],"prefix":"user-","from":"…","to":"…","reset":true}
//
// with each field at most once and by its exact (lower-case) name.
//
// For example:
//
//	curl 'localhost:8080/jobs/entries?queue=mail&state=failed&limit=50&payloads=true'
//	curl 'localhost:8080/jobs/entries?queue=mail&state=failed&limit=50&after=mail/1234'
//	curl 'localhost:8080/jobs/count?state=pending&state=delayed'
//	curl -X POST 'localhost:8080/jobs/retry?queue=mail&state=failed&reset=true'
//	curl -X POST -H 'Content-Type: application/json' -d '{"state":["failed"]}' localhost:8080/jobs/delete
//
// # Listing
//
// Entries are listed by queue name, then ID. A page is written as the
// Inspector yields it, in constant space, and holds at most limit entries;
// its "next" is the cursor to pass as after for the next page, or "" when
// the listing ended. Paging by cursor stays correct while the queues
// change: no entry is listed twice, the entries that stay are all listed,
// in order, and entries added or changed meanwhile may or may not be (see
// sched.Inspector.List). A listing that fails after it started (a backend
// error) cannot change its status: the page then ends with "error" set,
// and "next" resumes after the last entry listed. Each request's context
// is the listing's: a client that goes away stops it.
//
// A payload is encoded with encoding/json. One that cannot be (a channel,
// a func, a NaN, a MarshalJSON that fails, panics or calls
// runtime.Goexit) does not fail the listing: its entry is listed with
// "payloadError" in place of "payload".
// It is encoded as the backend holds it, while its handler may be
// running: a payload whose handler changes what it refers to (a pointer,
// map or slice) is read as it changes, a data race (see sched.Job's
// Payload).
//
// The Inspector's backends copy entries a page at a time under their lock
// and yield them outside it, so a slow client holds no lock of a queue.
//
// # Costs
//
// Counts by queue and state alone cost O(1) per queue; a count with
// prefix, from or to, like a write by filter, lists the entries it
// selects. GET /queues/{queue} summarises that queue alone. Retrying or
// deleting one entry acts on that entry alone: the Inspector retries and
// deletes it by a filter bounded to its ID.
//
// # Errors
//
// Every error is answered with {"error":"message"} and a status:
//
//	400  a bad parameter: unknown name, a value that does not parse, a
//	     repeated single parameter, a limit out of range, a filter too
//	     large, a body where none is taken, malformed JSON
//	403  writes disabled, or a cross-origin browser request for a write
//	404  an unknown queue or entry, or an unknown route, which a path
//	     that is not clean (with an empty, "." or ".." segment) is: it
//	     is not redirected to the clean path
//	405  a method the route does not take (with Allow)
//	409  the entry is in the wrong state (retrying a running entry,
//	     deleting a running one, disabling a final one)
//	413  a body larger than Options.MaxBody (not read past it); one
//	     its Content-Length declares larger is refused before anything
//	     else is checked, the route and whether writes are allowed
//	     included
//	415  a body that is not application/json
//	503  the request was cancelled, or the scheduler refused a call as
//	     stopped (sched.ErrStopped; its Inspector, which the routes
//	     use, still reads and writes entries after Stop)
//	500  a Handler not made by New (the zero Handler, or a nil
//	     *Handler), and anything else
//
// A write by filter that fails part way says how far it got:
// {"error":"…","deleted":n} or {"error":"…","retried":n}.
package schedhttp
