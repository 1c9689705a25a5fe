// Package props holds jobkit's property tests: rapid state machines that drive
// each package and a few-line reference model with the same random operations
// and require the same observable results after every step, and concurrent
// stress tests run under the race detector.
//
// The package has no API; run it with
//
//	go test ./props -rapid.checks=1000
//
// (the default is 100 checks; .ci/run uses more). A failing case shrinks to a
// few steps and is saved under testdata/rapid for replay.
package props
