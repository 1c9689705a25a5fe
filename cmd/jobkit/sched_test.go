package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// atLeast finds re's first submatch, a duration, in out and checks that it
// is at least min.
func atLeast(t *testing.T, out, re string, min time.Duration) {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(out)
	if m == nil {
		t.Errorf("no line matches %q", re)
		return
	}
	d, err := time.ParseDuration(m[1])
	if err != nil || d < min {
		t.Errorf("%q: %q, want at least %v (%v)", re, m[0], min, err)
	}
}

// mostAtOnce finds re's first submatch, a count, in out and checks that it
// is in [1, max].
func mostAtOnce(t *testing.T, out, re string, max int) {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(out)
	if m == nil {
		t.Errorf("no line matches %q", re)
		return
	}
	if n, _ := strconv.Atoi(m[1]); n < 1 || n > max {
		t.Errorf("%q: %d at once, want 1 to %d", m[0], n, max)
	}
}

func TestSchedDemoShowsOutcomes(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := runSched(t.Context(), &buf, schedConfig{}); err != nil {
		t.Fatalf("runSched: %v\n%s", err, buf.String())
	}
	out := buf.String()
	defer func() {
		if t.Failed() {
			t.Logf("output:\n%s", out)
		}
	}()

	// One line per run, each as it ended: 6 emails, 1 retry of them, 4
	// reports, 1 rerun after the snooze, 1 retry.
	if n := len(regexp.MustCompile(`(?m)^ *\+\d+ms  (emails |reports)  `).FindAllString(out, -1)); n != 13 {
		t.Errorf("%d run lines, want 13", n)
	}
	for _, want := range []string{
		"carol@example.com: attempt 1 failed: smtp: connection reset by peer; retried in 100ms\n",
		"bob@: invalid address: failed for good, not retried\n",
		"weekly: sales figures not loaded yet: snoozed for 150ms (attempt 1, not spent)\n",
		"quarterly: attempt 1 failed: write report: no space left on device; retried in 100ms\n",
		"quarterly: attempt 2 failed: write report: no space left on device; no retries left\n",
	} {
		if strings.Count(out, want) != 1 {
			t.Errorf("want once: %q", want)
		}
	}
	// The retry starts no sooner than the policy's delay after the failed
	// run started; the snoozed run no sooner than the snooze after it ended.
	atLeast(t, out, `carol@example.com: attempt 2, started (\S+) after attempt 1: sent\n`, retryBase)
	atLeast(t, out, `weekly: ran again (\S+) after its snooze, still attempt 1: done\n`, snoozeFor)

	// The error queue lists the two failed entries, with their errors.
	i, j := strings.Index(out, "\nerror queue:\n"), strings.Index(out, "\nsummary:\n")
	if i < 0 || j < i {
		t.Fatalf("no error queue, or no summary after it")
	}
	errq := out[i : j+1]
	for _, re := range []string{
		`\n  emails/\d+  bob@: failed after 1 attempt\n    attempt 1 at \+\d+ms: permanent: invalid address "bob@" \(\*sched\.PermanentError\)\n`,
		`\n  reports/\d+  quarterly: failed after 2 attempts\n` +
			`    attempt 1 at \+\d+ms: write report: no space left on device \(\*errors\.errorString\)\n` +
			`    attempt 2 at \+\d+ms: write report: no space left on device \(\*errors\.errorString\)\n`,
	} {
		if !regexp.MustCompile(re).MatchString(errq) {
			t.Errorf("error queue does not match %q:\n%s", re, errq)
		}
	}
	if n := len(regexp.MustCompile(`\n  \S`).FindAllString(errq, -1)); n != 2 {
		t.Errorf("error queue lists %d entries, want 2", n)
	}

	// A summary line per queue, caps kept.
	mostAtOnce(t, out, `\n  emails   priority 3, cap 2: 6 added, 5 succeeded, 1 failed, 0 live; at most (\d+) at once; `+
		`in \S+: 7 runs, 29% failed, [1-9]\d* jobs/s; slot-time \S+\n`, 2)
	mostAtOnce(t, out, `\n  reports  priority 1, cap 1: 4 added, 3 succeeded, 1 failed, 0 live; at most (\d+) at once; `+
		`in \S+: 5 runs, 40% failed, [1-9]\d* jobs/s; slot-time \S+\n`, 1)
	mostAtOnce(t, out, `\ngovernor: at most (\d+) jobs ran at once on its 2 slots; last reading: `, govSlots)
	if strings.Contains(out, "management API") {
		t.Error("an API was announced without -http")
	}
}

// get GETs url and decodes its JSON body into v.
func get(t *testing.T, c *http.Client, url string, v any) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Errorf("GET %s: %v", url, err)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Errorf("GET %s: %v", url, err)
	}
}

type queuesReply struct {
	Queues []struct {
		Name   string
		Counts struct{ Added, Succeeded, Failed int }
	}
}

func TestSchedDemoServesAPI(t *testing.T) {
	t.Parallel()
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var phases []bool
	var base string
	var buf bytes.Buffer
	err := runSched(ctx, &buf, schedConfig{HTTP: "127.0.0.1:0", serving: func(url string, finished bool) {
		phases = append(phases, finished)
		base = url
		var qs queuesReply
		get(t, c, url+"/queues", &qs)
		names := []string{}
		for _, q := range qs.Queues {
			names = append(names, q.Name)
		}
		if !slices.Equal(names, []string{"emails", "reports"}) {
			t.Errorf("GET /queues: queues %q, want emails and reports", names)
		}
		if !finished {
			return
		}
		// The demo has finished: the API shows its outcome, and stays.
		if len(qs.Queues) == 2 {
			if e, r := qs.Queues[0].Counts, qs.Queues[1].Counts; e.Added != 6 || e.Succeeded != 5 || e.Failed != 1 ||
				r.Added != 4 || r.Succeeded != 3 || r.Failed != 1 {
				t.Errorf("GET /queues: counts %+v, %+v", e, r)
			}
		}
		var page struct {
			Entries []struct {
				Queue, Key string
				Errors     []struct{ Message string }
			}
		}
		get(t, c, url+"/entries?state=failed", &page)
		var got []string
		for _, e := range page.Entries {
			got = append(got, e.Queue+" "+e.Key+": "+e.Errors[len(e.Errors)-1].Message)
		}
		want := []string{`emails bob@: permanent: invalid address "bob@"`, "reports quarterly: write report: no space left on device"}
		if !slices.Equal(got, want) {
			t.Errorf("GET /entries?state=failed: %q, want %q", got, want)
		}
		// Read-only.
		resp, err := c.Post(url+"/retry?state=failed", "", nil)
		if err != nil {
			t.Errorf("POST /retry: %v", err)
		} else {
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("POST /retry: %s, want 403", resp.Status)
			}
		}
		cancel() // an interrupt ends the demo
	}})
	if err != nil {
		t.Fatalf("runSched: %v\n%s", err, buf.String())
	}
	if !slices.Equal(phases, []bool{false, true}) {
		t.Fatalf("serving called for %v, want [false true]", phases)
	}
	out := buf.String()
	for _, want := range []string{
		"management API (read-only) at " + base + ", for example:\n",
		"  curl " + base + "/queues\n",
		"  curl '" + base + "/entries?state=failed'\n",
		"its entries stay at " + base + " until interrupted (Ctrl-C)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The server has stopped.
	if resp, err := c.Get(base + "/queues"); err == nil {
		resp.Body.Close()
		t.Errorf("GET /queues after the demo: %s, want an error", resp.Status)
	}
}

func TestSchedDemoInterrupted(t *testing.T) {
	t.Parallel()
	// Interrupted while the jobs run (the first call of serving): the demo
	// stops at once, cancelling its handlers, and leaves nothing running
	// (goleak checks in TestMain).
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var buf bytes.Buffer
	err := runSched(ctx, &buf, schedConfig{HTTP: "127.0.0.1:0", serving: func(string, bool) { cancel() }})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("runSched interrupted = %v, want context.Canceled\n%s", err, buf.String())
	}
	if strings.Contains(buf.String(), "summary:") {
		t.Errorf("an interrupted demo printed its summary:\n%s", buf.String())
	}

	// Interrupted before it starts.
	if err := runSched(ctx, &bytes.Buffer{}, schedConfig{}); !errors.Is(err, context.Canceled) {
		t.Errorf("runSched with a cancelled context = %v, want context.Canceled", err)
	}
}

func TestSchedDemoBadAddress(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	err := runSched(t.Context(), &buf, schedConfig{HTTP: "127.0.0.1:99999"})
	if err == nil || !strings.Contains(err.Error(), "99999") {
		t.Errorf("runSched with a bad address = %v, want an error naming it", err)
	}
	if buf.Len() != 0 {
		t.Errorf("the demo went on despite the bad address:\n%s", buf.String())
	}
}
