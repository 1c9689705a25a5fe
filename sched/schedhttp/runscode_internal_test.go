package schedhttp

import (
	"reflect"
	"testing"
	"time"
)

type textKey struct{ S string }

func (*textKey) MarshalText() ([]byte, error) { return nil, nil }

type plainList struct {
	Next *plainList
	N    []int
	M    map[string][2]float64
}

type hidden struct {
	_ struct{ At *time.Time } // unexported, and behind a pointer
}

// runsCode finds every method encoding/json may call, however deep, and
// nothing else: a payload it misses would be encoded on the request's
// goroutine, where a Goexit in it ends the request.
func TestRunsCode(t *testing.T) {
	for _, c := range []struct {
		v    any
		want bool
	}{
		{nil, false},
		{42, false},
		{"s", false},
		{plainList{}, false},
		{[]chan int{}, false},
		{time.Time{}, true},
		{[]any{}, true},
		{map[textKey]int{}, true}, // a pointer method, of a key
		{map[string][]*plainList{}, false},
		{hidden{}, true},
		{struct{ R []struct{ E error } }{}, true},
	} {
		if got := runsCode(reflect.TypeOf(c.v)); got != c.want {
			t.Errorf("runsCode(%T) = %v, want %v", c.v, got, c.want)
		}
	}
}
