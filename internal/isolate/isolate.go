// Package isolate calls code the caller does not trust (a user's callback:
// a retry delay, a log handler) on a goroutine of its own, so that a panic
// or a runtime.Goexit in it ends that goroutine and not the caller's, which
// may hold what no deferred call could give back in time.
package isolate

// Call calls f on a goroutine of its own, waits for it to return, panic or
// end (runtime.Goexit), and reports whether it returned. A panic is
// recovered and dropped: callers that report it do so from f. Call costs a
// goroutine and a channel, so it is for slow paths.
func Call(f func()) (returned bool) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { _ = recover() }()
		f()
		returned = true
	}()
	<-done
	return returned
}
