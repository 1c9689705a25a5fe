// Package errchain guards the walks of errors.Is and errors.As over an
// error that is the user's (a handler's, a custom backend's): an error
// whose Unwrap returns itself (or one of the errors that wrap it) makes
// both loop for ever, so jobkit checks that a user's error's chain ends
// (Long) before it searches it.
package errchain

import "errors"

// Max is the most errors an error may wrap, all told, for jobkit to search
// its chain: far more than any real chain, few enough to walk at once.
const Max = 1000

// Long reports whether err wraps more than n errors in all, counting as
// errors.Is and errors.As visit them (depth first, through Unwrap() error
// and Unwrap() []error); a chain that wraps itself is endless. It stops
// counting at n, so it costs at most n calls of Unwrap. It calls nothing
// but err's Unwrap methods, which may panic: that is the caller's to
// recover.
func Long(err error, n int) bool {
	seen := 0
	var walk func(error) bool
	walk = func(e error) bool {
		for e != nil {
			if seen++; seen > n {
				return true
			}
			switch u := e.(type) {
			case interface{ Unwrap() error }:
				e = u.Unwrap()
			case interface{ Unwrap() []error }:
				for _, x := range u.Unwrap() {
					if walk(x) {
						return true
					}
				}
				return false
			default:
				return false
			}
		}
		return false
	}
	return walk(err)
}

// Is is errors.Is(err, target), but false at once for an error that wraps
// more than Max errors or itself.
func Is(err, target error) bool {
	return err != nil && !Long(err, Max) && errors.Is(err, target)
}
