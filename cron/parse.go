package cron

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	robfig "github.com/robfig/cron/v3"

	"github.com/jobkit/jobkit/internal/panicval"
	"github.com/jobkit/jobkit/sched"
)

// Option configures [Parse], or a job of an [Engine]. [WithLocation] and
// [WithAnchor] configure parsing (Parse, and [Engine.RegisterSpec] and
// [Engine.UpdateSpec], which parse); [WithMissed], [WithLastRun] and
// [WithRetry] configure a job ([Engine.Register] and RegisterSpec). A call
// ignores the options that do not concern it. The zero Option does nothing.
type Option struct {
	apply func(*options)
}

// options is what Options set.
type options struct {
	loc       *time.Location
	anchor    time.Time
	anchorSet bool

	missed  Missed
	lastRun time.Time
	retry   *sched.RetryPolicy
}

// WithLocation sets the time zone a spec's wall times are read in and the
// location of the times its schedule returns. Defaults to time.Local. A nil
// location makes Parse fail with [ErrInvalidLocation]. A CRON_TZ= or TZ=
// prefix in the spec overrides it.
func WithLocation(loc *time.Location) Option {
	return Option{func(c *options) { c.loc = loc }}
}

// WithAnchor sets the anchor of an @every spec: its activations are
// anchor + k·d for k = 0, 1, 2, … (see [Every]). For Parse it defaults to
// the zero time.Time, which aligns the activations to multiples of d since
// the zero time, as time.Time.Truncate does: @every 15m fires at :00, :15,
// :30 and :45 past each UTC hour. [Engine.RegisterSpec] defaults it to the
// job's last run ([WithLastRun]) or else the time of registration, and
// [Engine.UpdateSpec] to the time of the update, so that @every d counts
// from there. Specs other than @every ignore it.
func WithAnchor(anchor time.Time) Option {
	return Option{func(c *options) { c.anchor, c.anchorSet = anchor, true }}
}

// parser is robfig's parser for five fields with an optional leading seconds
// field, and descriptors.
var parser = robfig.NewParser(robfig.SecondOptional | robfig.Minute | robfig.Hour |
	robfig.Dom | robfig.Month | robfig.Dow | robfig.Descriptor)

// Parse parses a cron spec and returns its schedule.
//
// The syntax is robfig/cron/v3's: five fields (minute, hour, day of month,
// month, day of week), or six with a leading seconds field; values, ranges
// a-b, steps */n and a-b/n, lists, month and weekday names (jan, mon), and ?
// as *. Descriptors: @yearly (@annually), @monthly, @weekly, @daily
// (@midnight), @hourly, and @every <duration> (time.ParseDuration syntax, at
// least one second, kept exactly).
//
// The spec may start with CRON_TZ=<zone> or TZ=<zone> and a space; the zone
// (an IANA name such as Europe/Berlin, loaded with time.LoadLocation)
// overrides [WithLocation]. At most one prefix is allowed.
//
// Parse returns an error wrapping [ErrInvalidSpec] (and [ErrInvalidLocation]
// or [ErrInvalidInterval] where they apply) for any spec it cannot use,
// including a spec that can never fire (0 0 30 2 *, 0 0 31 4 *: a day that
// its months never have). A nil [WithLocation] fails with
// [ErrInvalidLocation] alone, since the spec is not at fault. Parse never
// panics: robfig's parser panics on some inputs, and every call to it is
// guarded.
//
// For an @every spec the result is an [*IntervalSchedule]; otherwise it
// follows the rules for wall-clock specs in the package doc. The result is
// immutable and safe for concurrent use.
func Parse(spec string, opts ...Option) (Schedule, error) {
	cfg := options{loc: time.Local}
	cfg.apply(opts)
	return parse(spec, &cfg)
}

// apply applies opts to c.
func (c *options) apply(opts []Option) {
	for _, o := range opts {
		if o.apply != nil {
			o.apply(c)
		}
	}
}

// parse is Parse with its options applied.
func parse(spec string, cfg *options) (Schedule, error) {
	if cfg.loc == nil {
		return nil, fmt.Errorf("%w: WithLocation(nil)", ErrInvalidLocation)
	}
	text := strings.TrimSpace(spec)
	rest, loc, err := splitZone(text)
	if err != nil {
		return nil, specError(text, err)
	}
	if loc == nil {
		loc = cfg.loc
	}
	rest = strings.TrimSpace(rest)
	if rest == "" {
		return nil, specError(text, fmt.Errorf("empty spec"))
	}
	if fields := everyFields(rest); fields != nil {
		if len(fields) != 2 {
			return nil, specError(text, fmt.Errorf("want @every <duration>"))
		}
		d, err := time.ParseDuration(fields[1])
		if err != nil {
			return nil, specError(text, err)
		}
		s, err := newEvery(d, cfg.anchor, loc)
		if err != nil {
			return nil, specError(text, err)
		}
		return s, nil
	}
	rs, err := robfigParse(rest)
	if err != nil {
		return nil, specError(text, err)
	}
	ss, ok := rs.(*robfig.SpecSchedule)
	if !ok {
		return nil, specError(text, fmt.Errorf("unsupported schedule type %T", rs))
	}
	s := newSpec(text, ss.Second, ss.Minute, ss.Hour, ss.Dom, ss.Month, ss.Dow, loc)
	if why := s.neverFires(); why != "" {
		return nil, specError(text, fmt.Errorf("never fires: %s", why))
	}
	return s, nil
}

// everyFields returns the fields of an @every spec, or nil for other specs.
func everyFields(spec string) []string {
	if !strings.HasPrefix(spec, "@every") {
		return nil
	}
	if fields := strings.Fields(spec); fields[0] == "@every" {
		return fields
	}
	return nil
}

// robfigParse calls robfig's parser, turning a panic into an error.
func robfigParse(spec string) (s robfig.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("parser panicked: %s", panicval.String(r))
		}
	}()
	return parser.Parse(spec)
}

// splitZone removes a CRON_TZ= or TZ= prefix from spec and loads its zone. It
// returns a nil location when there is no prefix. Prefixes never reach
// robfig's parser, which panics on some of them (TZ=UTC with no space after
// it).
func splitZone(spec string) (rest string, loc *time.Location, err error) {
	name, rest, ok := cutZone(spec)
	if !ok {
		return spec, nil, nil
	}
	if _, _, again := cutZone(strings.TrimSpace(rest)); again {
		return "", nil, fmt.Errorf("more than one zone prefix")
	}
	if name == "" {
		return "", nil, fmt.Errorf("%w: empty zone name", ErrInvalidLocation)
	}
	if strings.TrimSpace(rest) == "" {
		return "", nil, fmt.Errorf("no schedule after the zone prefix")
	}
	loc, err = loadLocation(name)
	if err != nil {
		return "", nil, fmt.Errorf("%w: %v", ErrInvalidLocation, err)
	}
	return rest, loc, nil
}

// cutZone splits "CRON_TZ=name rest" or "TZ=name rest" at the first white
// space after the prefix.
func cutZone(spec string) (name, rest string, ok bool) {
	var after string
	switch {
	case strings.HasPrefix(spec, "CRON_TZ="):
		after = spec[len("CRON_TZ="):]
	case strings.HasPrefix(spec, "TZ="):
		after = spec[len("TZ="):]
	default:
		return "", "", false
	}
	i := strings.IndexFunc(after, unicode.IsSpace)
	if i < 0 {
		return after, "", true
	}
	return after[:i], after[i:], true
}

// loadLocation calls time.LoadLocation, turning a panic into an error.
func loadLocation(name string) (loc *time.Location, err error) {
	defer func() {
		if r := recover(); r != nil {
			loc, err = nil, fmt.Errorf("loading zone %q panicked: %s", name, panicval.String(r))
		}
	}()
	return time.LoadLocation(name)
}

// specError wraps err as an ErrInvalidSpec for spec.
func specError(spec string, err error) error { return &parseError{spec, err} }

// parseError is an error from Parse. It matches ErrInvalidSpec and
// whatever its cause matches.
type parseError struct {
	spec string
	err  error
}

func (e *parseError) Error() string {
	return fmt.Sprintf("%v %q: %s", ErrInvalidSpec, e.spec, strings.TrimPrefix(e.err.Error(), "cron: "))
}

func (e *parseError) Unwrap() []error { return []error{ErrInvalidSpec, e.err} }
