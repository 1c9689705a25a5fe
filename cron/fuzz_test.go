package cron_test

import (
	"errors"
	"testing"
	"time"

	"github.com/jobkit/jobkit/cron"
)

// FuzzParse: Parse never panics; it returns a schedule or an error wrapping
// ErrInvalidSpec (or ErrInvalidLocation), never both; an accepted schedule
// fires, strictly after its argument, and never panics either.
//
//	go test ./cron -run '^$' -fuzz FuzzParse -fuzztime 60s
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"* * * * *", "*/15 * * * *", "0 30 9 * * mon-fri", "0 0 29 2 *", "0 0 30 2 *", "0 0 31 4 *",
		"@hourly", "@daily", "@weekly", "@monthly", "@yearly", "@annually", "@midnight",
		"@every 1h30m", "@every 500ms", "@every -1s", "@every",
		"TZ=UTC", "CRON_TZ=UTC", "TZ=", "CRON_TZ=", "TZ= ", "TZ=UTC * * * * *",
		"CRON_TZ=America/New_York 30 2 * * *", "TZ=Nowhere * * * * *", "TZ=UTC TZ=UTC @daily",
		"1-2/3,4 5-6 ? jan-mar sun", "*/0 * * * *", "99999999999999999999 * * * *", "", " ", "@",
	} {
		f.Add(s, int64(1.77e9))
	}
	f.Fuzz(func(t *testing.T, spec string, from int64) {
		s, err := cron.Parse(spec, cron.WithLocation(time.UTC))
		if err != nil {
			if s != nil {
				t.Fatalf("Parse(%q) returned a schedule and %v", spec, err)
			}
			if !errors.Is(err, cron.ErrInvalidSpec) && !errors.Is(err, cron.ErrInvalidLocation) {
				t.Fatalf("Parse(%q) = %v, not a package sentinel", spec, err)
			}
			return
		}
		// Keep from within years 1..9999.
		at := time.Unix(from%253402300799, 0)
		n := s.Next(at)
		if !n.After(at) {
			t.Fatalf("Parse(%q).Next(%v) = %v", spec, at, n)
		}
	})
}
