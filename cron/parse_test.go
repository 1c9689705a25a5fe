package cron_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jobkit/jobkit/cron"
)

func TestParseRejects(t *testing.T) {
	t.Parallel()
	cases := []struct {
		spec string
		also error // a second sentinel the error must match, or nil
	}{
		{"", nil},
		{"   \t", nil},
		// robfig's parser panics on these; Parse must not.
		{"TZ=UTC", nil},
		{"CRON_TZ=UTC", nil},
		{"TZ=", cron.ErrInvalidLocation},
		{"CRON_TZ=", cron.ErrInvalidLocation},
		{"TZ=America/New_York", nil},
		{"TZ= * * * * *", cron.ErrInvalidLocation},
		{"TZ=\t* * * * *", cron.ErrInvalidLocation},
		{"TZ=Nowhere/City * * * * *", cron.ErrInvalidLocation},
		{"TZ=../../etc/passwd * * * * *", cron.ErrInvalidLocation},
		{"TZ=/etc/localtime * * * * *", cron.ErrInvalidLocation},
		{"TZ=UTC TZ=UTC * * * * *", nil},
		{"CRON_TZ=UTC TZ=UTC @daily", nil},
		// Malformed fields.
		{"* * * *", nil},
		{"* * * * * * *", nil},
		{"60 * * * *", nil},
		{"* 24 * * *", nil},
		{"* * 0 * *", nil},
		{"* * 32 * *", nil},
		{"* * * 13 *", nil},
		{"* * * * 7", nil},
		{"*/0 * * * *", nil},
		{"5-1 * * * *", nil},
		{"1-2-3 * * * *", nil},
		{"*/2/3 * * * *", nil},
		{"-1 * * * *", nil},
		{"a * * * *", nil},
		{"99999999999999999999 * * * *", nil},
		{"* * * foo *", nil},
		// Never fires.
		{"0 0 30 2 *", nil},
		{"0 0 31 2 *", nil},
		{"0 0 30,31 2 *", nil},
		{"0 0 31 4 *", nil},
		{"0 0 31 4,6,9,11 *", nil},
		{"0 0 0 31 apr *", nil},
		{"0 0 31 4 */1", nil}, // */1 keeps robfig's star: both fields must match
		// Empty lists, which robfig accepts as fields with no value.
		{", 0 1 1 0", nil},
		{"* , * * *", nil},
		{"* * , * *", nil},
		{"* * * , *", nil},
		{", * * * * *", nil},
		{"0 0 , * ,", nil},
		// Descriptors.
		{"@every", nil},
		{"@every 500ms", cron.ErrInvalidInterval},
		{"@every 999ms", cron.ErrInvalidInterval},
		{"@every 0s", cron.ErrInvalidInterval},
		{"@every -1h", cron.ErrInvalidInterval},
		{"@every abc", nil},
		{"@every 1h 2h", nil},
		{"@every 9999999999h", nil},
		{"@daily extra", nil},
		{"@Daily", nil},
		{"@unknown", nil},
		{"@", nil},
	}
	for _, c := range cases {
		t.Run(c.spec, func(t *testing.T) {
			t.Parallel()
			s, err := cron.Parse(c.spec, cron.WithLocation(time.UTC))
			if err == nil {
				t.Fatalf("Parse(%q) = %v, want an error", c.spec, s)
			}
			if s != nil {
				t.Errorf("Parse(%q) returned a schedule with its error", c.spec)
			}
			if !errors.Is(err, cron.ErrInvalidSpec) {
				t.Errorf("Parse(%q) error %v does not match ErrInvalidSpec", c.spec, err)
			}
			if c.also != nil && !errors.Is(err, c.also) {
				t.Errorf("Parse(%q) error %v does not match %v", c.spec, err, c.also)
			}
			if !strings.HasPrefix(err.Error(), "cron: invalid spec") {
				t.Errorf("Parse(%q) error %q lacks the package prefix", c.spec, err)
			}
		})
	}
}

func TestParseNeverFiresMessage(t *testing.T) {
	t.Parallel()
	_, err := cron.Parse("0 0 30 2 *")
	if err == nil || !strings.Contains(err.Error(), "never fires") {
		t.Errorf("Parse(0 0 30 2 *) = %v, want a never-fires error", err)
	}
}

func TestParseNilLocation(t *testing.T) {
	t.Parallel()
	_, err := cron.Parse("@daily", cron.WithLocation(nil))
	if !errors.Is(err, cron.ErrInvalidLocation) {
		t.Errorf("Parse with a nil location = %v, want ErrInvalidLocation", err)
	}
	// The zero Option is ignored.
	if _, err := cron.Parse("@daily", cron.Option{}); err != nil {
		t.Errorf("Parse with a zero Option = %v", err)
	}
}

func TestParseAccepts(t *testing.T) {
	t.Parallel()
	for _, spec := range []string{
		"* * * * *",
		"0 * * * * *",
		"0 0 29 2 *",
		"0 0 31 * *",
		"0 0 30 2 mon", // both day fields restricted: Mondays of February
		"0 0 31 4 sun",
		"0-59/7 1,2,3 1-31/2 jan-dec/3 mon-fri",
		"CRON_TZ=Europe/Berlin 0 9 * * *",
		"TZ=UTC @hourly",
		"TZ=Local @hourly",
		"  @daily  ",
		"@every 1.5s",
		"@every 1s",
		"@every 8760h",
	} {
		if _, err := cron.Parse(spec); err != nil {
			t.Errorf("Parse(%q): %v", spec, err)
		}
	}
}

func TestParseString(t *testing.T) {
	t.Parallel()
	for spec, want := range map[string]string{
		" 0 9 * * * ":       "0 9 * * *",
		"@every 90m":        "@every 1h30m0s",
		"TZ=UTC   @daily  ": "TZ=UTC   @daily",
	} {
		s := mustParse(t, spec)
		if got := s.(interface{ String() string }).String(); got != want {
			t.Errorf("Parse(%q).String() = %q, want %q", spec, got, want)
		}
	}
}

// The zone prefix wins over WithLocation; WithLocation is the default.
func TestParseLocation(t *testing.T) {
	t.Parallel()
	ny, berlin := mustLoad(t, "America/New_York"), mustLoad(t, "Europe/Berlin")
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	got := mustParse(t, "CRON_TZ=Europe/Berlin 0 9 * * *", cron.WithLocation(ny)).Next(from)
	if want := time.Date(2026, 1, 1, 9, 0, 0, 0, berlin); !got.Equal(want) || got.Location().String() != "Europe/Berlin" {
		t.Errorf("prefix: Next = %v, want %v", got, want)
	}
	got = mustParse(t, "0 9 * * *", cron.WithLocation(ny)).Next(from)
	if want := time.Date(2026, 1, 1, 9, 0, 0, 0, ny); !got.Equal(want) {
		t.Errorf("WithLocation: Next = %v, want %v", got, want)
	}
	got = mustParse(t, "0 9 * * *").Next(from)
	if got.Location() != time.Local {
		t.Errorf("default location = %v, want time.Local", got.Location())
	}
}
