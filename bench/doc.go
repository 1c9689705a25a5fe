// Package bench holds side-by-side benchmarks of jobkit's distinct queue
// against its peers: client-go's workqueue, controller-runtime's
// priorityqueue and a buffered channel (the floor: no deduplication at all).
//
// It is a module of its own so that k8s.io and controller-runtime never
// enter the library's go.mod. Every benchmark drives the implementations
// through one small adapter interface, [Impl], generic over the key type, and
// names its sub-benchmarks with key=value segments (impl=<name>, …) so that
// benchstat can put the peers side by side (-col /impl). [Factories] is the
// table of implementations: adding one there adds it to every scenario that
// compares them all.
//
// Scenario 1, BenchmarkMPMC, runs every implementation with six key kinds
// (integer IDs in order, per-producer ranges, scrambled integers,
// "namespace/name" strings, a small struct, a named integer type), along
// two consumer paths ([PathWork]: jobkit's Queue.Work; [PathScope]:
// scope.Run around Queue.TakeAppend), with a backlog that stays small and one
// preloaded past 1,000,000. The scenarios, the targets and the latest figures are in
// RESULTS.md; run.sh runs the grid and writes it.
package bench
