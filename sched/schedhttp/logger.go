package schedhttp

import (
	"errors"
	"log/slog"

	"github.com/jobkit/jobkit/internal/isolate"
	"github.com/jobkit/jobkit/internal/safelog"
)

// guardLogger returns l with its handler guarded (see safelog.Guard), so
// that a handler that panics or ends its goroutine (runtime.Goexit) loses
// only its record, and the request is still answered. A write's record is
// logged once the write is done and before its answer: a fault there would
// leave the client with no answer for a write that happened. The goroutine
// is paid per record: on writes and failures, not on reads that succeed.
func guardLogger(l *slog.Logger) *slog.Logger {
	return safelog.Guard(l, isolate.Call, errHandlerFault)
}

// errHandlerFault is what the guarded handler's Handle returns when the
// handler panicked or ended its goroutine.
var errHandlerFault = errors.New("schedhttp: the logger's handler panicked or called runtime.Goexit")
