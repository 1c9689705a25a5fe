// Package bench holds side-by-side benchmarks of jobkit's distinct queue
// against its peers: client-go's workqueue, controller-runtime's
// priorityqueue and a buffered channel (the floor: no deduplication at all).
//
// It is a module of its own so that k8s.io and controller-runtime never
// enter the library's go.mod. Every benchmark drives the implementations
// through one small adapter interface, [Impl], and names its sub-benchmarks
// Benchmark<Scenario>/impl=<name>/…, so that benchstat can put the peers side
// by side (-col /impl). The scenarios, the targets and the latest figures are
// in RESULTS.md; run.sh runs the grid and writes it.
package bench
