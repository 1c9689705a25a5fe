package distinct_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/jobkit/jobkit/distinct"
	"github.com/jobkit/jobkit/scope"
)

// fuzzKey turns two bytes into a key of one of several dynamic types, and
// says whether it is a valid key: NaN (alone or in a struct or array) and
// unhashable values (slices, maps, and arrays or structs holding them) are
// not.
func fuzzKey(kind, v byte) (key any, valid bool) {
	type withFloat struct{ F float64 }
	type withAny struct{ A any }
	nan := v == 255
	f := float64(v)
	if nan {
		f = math.NaN()
	}
	switch kind % 9 {
	case 0:
		return int(v), true
	case 1:
		return int64(v), true // never equal to the int of the same value
	case 2:
		return f, !nan
	case 3:
		return fmt.Sprintf("default/pod-%d", v), true
	case 4:
		return withFloat{f}, !nan
	case 5:
		return []int{int(v)}, false
	case 6:
		return map[byte]bool{v: true}, false
	case 7:
		return [1]any{[]byte{v}}, false
	default:
		return withAny{[2]float64{1, f}}, !nan
	}
}

// FuzzQueue drives a Queue[any] with operations and keys decoded from the
// input and checks it against a model of which keys are queued and which are
// in progress, and the queue's invariants, after every step: Take returns the
// head of Queued in order; Queued and InProgress hold distinct keys, apart
// from each other, exactly the model's; Len and Stats agree with them; an
// invalid key changes nothing and is refused with ErrInvalid.
func FuzzQueue(f *testing.F) {
	f.Add([]byte{0, 0, 1, 0, 1, 1, 2, 0, 2, 255, 5, 0, 4, 3, 2, 0})
	f.Add([]byte{0, 2, 255, 0, 4, 255, 1, 2, 3, 0, 7, 1, 0, 3, 9, 3, 1, 4, 1})
	f.Add([]byte{0, 8, 255, 0, 8, 3, 1, 3, 5, 1, 2, 2, 6, 1, 3, 3, 1, 2, 7, 0})
	f.Fuzz(fuzzQueue)
}

func fuzzQueue(t *testing.T, ops []byte) {
	{
		ctx := context.Background()
		q, err := distinct.New[any](distinct.Config{Timestamps: len(ops)%2 == 0})
		if err != nil {
			t.Fatal(err)
		}
		queued := map[string]bool{} // the model, by key
		inProgress := map[string]*scope.Scope{}
		name := func(k any) string { return fmt.Sprintf("%T:%v", k, k) }
		var scopes []*scope.Scope
		var taken [][]any // per scope, the items it took
		next := func() byte {
			if len(ops) == 0 {
				return 0
			}
			b := ops[0]
			ops = ops[1:]
			return b
		}
		for len(ops) > 0 {
			switch op := next() % 7; op {
			case 0, 1: // add
				k, valid := fuzzKey(next(), next())
				var added bool
				var err error
				if op == 0 {
					added, err = q.TryAdd(k)
				} else {
					rest := q.AddAll([]any{k})
					added = len(rest) == 0
				}
				switch {
				case !valid:
					if added || (op == 0 && !errors.Is(err, distinct.ErrInvalid)) {
						t.Fatalf("invalid key %#v: added %v, err %v", k, added, err)
					}
				case queued[name(k)] || inProgress[name(k)] != nil:
					if added {
						t.Fatalf("duplicate %v added", k)
					}
				default:
					if !added || err != nil {
						t.Fatalf("new key %v: added %v, err %v", k, added, err)
					}
					queued[name(k)] = true
				}
			case 2: // take
				if len(queued) == 0 {
					continue
				}
				want := q.Queued()
				s := scope.New()
				items, err := q.Take(ctx, s, int(next()%4)+1)
				if err != nil || len(items) == 0 || !slices.EqualFunc(items, want[:len(items)], func(a, b any) bool { return a == b }) {
					t.Fatalf("Take = %v, %v; queued were %v", items, err, want)
				}
				for _, k := range items {
					delete(queued, name(k))
					inProgress[name(k)] = s
				}
				scopes = append(scopes, s)
				taken = append(taken, items)
			case 3, 4: // settle one item early: complete or fail
				if len(scopes) == 0 {
					continue
				}
				i := int(next()) % len(scopes)
				items := taken[i]
				k := items[int(next())%len(items)]
				var ok bool
				if op == 3 {
					ok = q.Complete(scopes[i], k)
				} else {
					ok = q.Fail(scopes[i], k)
				}
				if want := inProgress[name(k)] == scopes[i]; ok != want {
					t.Fatalf("settling %v early = %v, want %v", k, ok, want)
				}
				if ok {
					delete(inProgress, name(k))
					queued[name(k)] = op == 4
					if op == 3 {
						delete(queued, name(k))
					}
				}
			case 5: // close a scope, succeeding or failing
				if len(scopes) == 0 {
					continue
				}
				i := int(next()) % len(scopes)
				exit := scope.Succeeded()
				if next()%2 == 1 {
					exit = scope.Failed(errors.New("fuzz"))
				}
				if err := scopes[i].Close(exit); err != nil {
					t.Fatal(err)
				}
				for _, k := range taken[i] {
					if inProgress[name(k)] == scopes[i] {
						delete(inProgress, name(k))
						if exit.Failed() {
							queued[name(k)] = true
						}
					}
				}
				scopes = slices.Delete(scopes, i, i+1)
				taken = slices.Delete(taken, i, i+1)
			case 6: // remove, or look up
				k, valid := fuzzKey(next(), next())
				removed := q.Remove(k)
				if want := valid && queued[name(k)]; removed != want {
					t.Fatalf("Remove(%#v) = %v, want %v", k, removed, want)
				}
				delete(queued, name(k))
				if info, ok := q.Info(k); ok != (valid && inProgress[name(k)] != nil) || (ok && info.State != distinct.InProgress) {
					t.Fatalf("Info(%#v) = %+v, %v", k, info, ok)
				}
			}
			checkModel(t, q, queued, inProgress, name)
		}
		for _, s := range scopes {
			s.Close(scope.Succeeded())
		}
		closeAndDrain(t, q)
	}
}

func checkModel(t *testing.T, q *distinct.Queue[any], queued map[string]bool, inProgress map[string]*scope.Scope, name func(any) string) {
	t.Helper()
	seen := map[string]bool{}
	check := func(what string, xs []any, model func(string) bool) {
		for _, x := range xs {
			n := name(x)
			if seen[n] {
				t.Fatalf("%v twice in the queue", x)
			}
			seen[n] = true
			if !model(n) {
				t.Fatalf("%v is %s, the model says not", x, what)
			}
		}
	}
	qd, ip := q.Queued(), q.InProgress()
	check("queued", qd, func(n string) bool { return queued[n] })
	check("in progress", ip, func(n string) bool { return inProgress[n] != nil })
	if len(qd) != len(queued) || len(ip) != len(inProgress) || q.Len() != len(qd) {
		t.Fatalf("queued %d (Len %d), in progress %d; model %d and %d", len(qd), q.Len(), len(ip), len(queued), len(inProgress))
	}
	if st := q.Stats(); st.Queued != len(qd) || st.InProgress != len(ip) {
		t.Fatalf("Stats %+v", st)
	}
}
