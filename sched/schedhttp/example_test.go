package schedhttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"

	"github.com/jobkit/jobkit/sched"
	"github.com/jobkit/jobkit/sched/schedhttp"
)

// Serve a scheduler's queues read-only and page through a queue with the
// cursor.
func Example() {
	ctx := context.Background()
	s, err := sched.New(sched.Config{})
	if err != nil {
		panic(err)
	}
	emails, err := sched.NewQueue(s, "emails", sched.QueueConfig[string, string]{
		Handler: func(context.Context, *sched.Job[string, string]) error { return nil },
	})
	if err != nil {
		panic(err)
	}
	for _, to := range []string{"ann@example.com", "bob@example.com", "cy@example.com"} {
		if _, _, err := emails.Add(ctx, to); err != nil {
			panic(err)
		}
	}
	// The scheduler is not started: the entries stay pending.

	h, err := schedhttp.New(s.Inspector(), schedhttp.Options{})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	get := func(method, path string) (int, []byte) {
		req, err := http.NewRequest(method, srv.URL+path, nil)
		if err != nil {
			panic(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			panic(err)
		}
		return resp.StatusCode, body
	}

	after := ""
	for {
		_, body := get("GET", "/entries?queue=emails&limit=2&payloads=true&after="+url.QueryEscape(after))
		var page schedhttp.Page
		if err := json.Unmarshal(body, &page); err != nil {
			panic(err)
		}
		for _, e := range page.Entries {
			fmt.Printf("%s/%d %s %s payload %s\n", e.Queue, e.ID, e.Key, e.State, e.Payload)
		}
		fmt.Printf("next: %q\n", page.Next)
		if page.Next == "" {
			break
		}
		after = page.Next
	}

	_, body := get("GET", "/count?queue=emails&state=pending")
	fmt.Printf("%s", body)
	code, body := get("GET", "/count?state=done")
	fmt.Printf("%d %s", code, body)
	code, body = get("POST", "/retry?queue=emails&state=failed")
	fmt.Printf("%d %s", code, body)
	// Output:
	// emails/1 ann@example.com pending payload "ann@example.com"
	// emails/2 bob@example.com pending payload "bob@example.com"
	// next: "emails/2"
	// emails/3 cy@example.com pending payload "cy@example.com"
	// next: ""
	// {"count":3}
	// 400 {"error":"state: unknown state \"done\": want delayed, pending, awaiting, running, succeeded, failed, cancelled or poisoned"}
	// 403 {"error":"writes are disabled: POST /retry needs a handler made with Options.AllowWrites"}
}
