package distinct

import (
	"testing"

	"pgregory.net/rapid"
)

// TestTableMatchesMap drives the table and a built-in map with the same
// random inserts and deletes, over a small key space so that probe runs
// collide, wrap around and shift back.
func TestTableMatchesMap(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		var tb table[int, int]
		h := hash[int]
		m := map[int]int{}
		key := rapid.IntRange(0, 200)
		t.Repeat(map[string]func(*rapid.T){
			"put": func(t *rapid.T) {
				k, v := key.Draw(t, "k"), rapid.Int().Draw(t, "v")
				if p := tb.put(k, h(k), v); *p != v {
					t.Fatalf("put(%d) stored %d", k, *p)
				}
				m[k] = v
			},
			"del": func(t *rapid.T) {
				k := key.Draw(t, "k")
				_, want := m[k]
				if _, got := tb.del(k, h(k)); got != want {
					t.Fatalf("del(%d) = %v, want %v", k, got, want)
				}
				delete(m, k)
			},
			"": func(t *rapid.T) {
				if tb.len() != len(m) {
					t.Fatalf("len %d, want %d", tb.len(), len(m))
				}
				for k := range 201 {
					want, ok := m[k]
					p := tb.get(k, h(k))
					if (p != nil) != ok || (ok && *p != want) {
						t.Fatalf("get(%d) = %v, want %d, %v", k, p, want, ok)
					}
				}
				n := 0
				tb.all(func(k int, v *int) bool {
					if m[k] != *v {
						t.Fatalf("all yielded %d=%d, want %d", k, *v, m[k])
					}
					n++
					return true
				})
				if n != len(m) {
					t.Fatalf("all yielded %d entries, want %d", n, len(m))
				}
			},
		})
	})
}
