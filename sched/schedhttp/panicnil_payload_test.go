package schedhttp_test

import (
	"strings"
	"testing"

	"github.com/jobkit/jobkit/internal/testkit"
	"github.com/jobkit/jobkit/sched/internal/must"
)

// nilPanicky's MarshalJSON panics with nil.
type nilPanicky struct{}

func (nilPanicky) MarshalJSON() ([]byte, error) { panic(testkit.NilValue()) }

// Under GODEBUG=panicnil=1 (a setting Go keeps for old code) a payload
// whose MarshalJSON panics with nil is a payload that cannot be encoded,
// as one that panics with a value is (TestUnencodablePayloads), and the
// listing stays valid JSON. encoding/json stops such a panic itself, which
// recover cannot tell from none, and leaves the value's encoding cut
// short: the check of the entry's encoding catches that, so the error
// says that the entry could not be encoded rather than that MarshalJSON
// panicked.
func TestAPayloadWhoseMarshalJSONPanicsNilIsNotEncoded(t *testing.T) {
	if testkit.InChild(t, "GODEBUG=panicnil=1") {
		run(t, func(t *testing.T, f *fixture) {
			must.Add(t, f.odd, odd{9, nilPanicky{}})
			p := page(t, f.ro, "/entries?queue=odd&payloads=true&after=odd/8")
			if len(p.Entries) != 1 || p.Error != "" {
				t.Fatalf("%d entries, error %q; want odd/9 alone", len(p.Entries), p.Error)
			}
			if e := p.Entries[0]; e.Payload != nil || !strings.Contains(e.PayloadError, "cannot be encoded") || e.State != "pending" {
				t.Errorf("odd/9: payload %s, error %q, state %q; want a pending entry without its payload, saying that it cannot be encoded", e.Payload, e.PayloadError, e.State)
			}
		})
	}
}
