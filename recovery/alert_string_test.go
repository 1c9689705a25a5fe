package recovery_test

import (
	"strings"
	"testing"

	"github.com/jobkit/jobkit/recovery"
)

// Alert.String "describes the alert in one line", whatever the queue's
// name: sched accepts any UTF-8, line breaks included.
func TestAlertStringIsOneLine(t *testing.T) {
	t.Parallel()
	for _, a := range []recovery.Alert{
		{Kind: recovery.TakenTooOften, Queue: "mail\nurgent", ID: 7, Taken: 11},
		{Kind: recovery.Stalled, Queue: "mail\r\nurgent\u2028", Waiting: 100, Running: 1},
	} {
		if s := a.String(); strings.ContainsAny(s, "\n\r\u2028\u2029\u0085") {
			t.Errorf("%v alert of queue %q: String() = %q, more than one line", a.Kind, a.Queue, s)
		}
	}
	for a, want := range map[recovery.Alert]string{
		{Kind: recovery.TakenTooOften, Queue: "mail", ID: 7, Taken: 11}:         "mail/7 taken 11 times",
		{Kind: recovery.Stalled, Queue: "mail", Waiting: 100, Running: 1}:       "mail: 100 entries waiting, 1 running, none ended",
		{Kind: recovery.TakenTooOften, Queue: "mail\nurgent", ID: 7, Taken: 11}: `"mail\nurgent"/7 taken 11 times`,
	} {
		if got := a.String(); got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
	}
}
