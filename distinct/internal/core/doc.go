// Package core implements the queue of package distinct, which wraps it and
// documents it, and of its client-go-compatible façade distinct/workqueue,
// which uses the hooks in getdone.go. It is internal so that those hooks do
// not widen distinct's API.
package core
