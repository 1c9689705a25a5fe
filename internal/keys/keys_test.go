package keys

import (
	"math"
	"testing"
	"unsafe"
)

func TestKindOf(t *testing.T) {
	t.Parallel()
	type JobID int64
	type point struct{ X, Y float64 }
	type withAny struct {
		A int
		B [2]any
	}
	type plain struct {
		A string
		B [3]int32
		C *int
	}
	for _, tt := range []struct {
		got, want Kind
		name      string
	}{
		{Of[int](), Int64, "int"},
		{Of[JobID](), Int64, "JobID"},
		{Of[uint32](), Int32, "uint32"},
		{Of[int16](), Int16, "int16"},
		{Of[byte](), Int8, "byte"},
		{Of[uintptr](), Int64, "uintptr"},
		{Of[string](), Plain, "string"},
		{Of[plain](), Plain, "plain struct"},
		{Of[*point](), Plain, "pointer"},
		{Of[float32](), Float, "float32"},
		{Of[complex128](), Float, "complex128"},
		{Of[point](), Float, "struct of floats"},
		{Of[[2]float64](), Float, "array of floats"},
		{Of[any](), Dynamic, "any"},
		{Of[error](), Dynamic, "error"},
		{Of[withAny](), Dynamic, "struct holding an array of any"},
		{Of[bool](), Plain, "bool"},
		{Of[chan int](), Plain, "chan"},
	} {
		if tt.got != tt.want {
			t.Errorf("Of[%s]() = %d, want %d", tt.name, tt.got, tt.want)
		}
	}
}

func TestLayoutHash(t *testing.T) {
	t.Parallel()
	type padded struct {
		A uint8
		B uint64
		C uint16
		S string
		D [3]uint8
	}
	type nested struct {
		P padded
		Q [2]string
		R *int
		E struct{}
	}
	l := LayoutOf[padded]()
	if l.Kind != Plain || LayoutOf[padded]() != l {
		t.Fatalf("LayoutOf[padded]() = %+v, not cached or not Plain", l)
	}
	// Equal keys hash equal, whatever their padding bytes hold.
	a := padded{A: 1, B: 2, C: 3, S: "default/pod-1", D: [3]uint8{4, 5, 6}}
	b := a
	b.S = string([]byte("default/pod-1")) // same contents, other memory
	raw := (*[unsafe.Sizeof(b)]byte)(unsafe.Pointer(&b))
	raw[1], raw[7], raw[20], raw[44] = 0xAA, 0xBB, 0xCC, 0xDD // padding after A, C and D
	if a != b {
		t.Fatal("padding changed equality")
	}
	ha, _ := HashWith(l, a)
	hb, _ := HashWith(l, b)
	if ha != hb {
		t.Errorf("equal keys hash %x and %x", ha, hb)
	}
	// Every significant byte and string counts.
	seen := map[uint64]bool{ha: true}
	for _, c := range []padded{
		{A: 2, B: 2, C: 3, S: "default/pod-1", D: [3]uint8{4, 5, 6}},
		{A: 1, B: 3, C: 3, S: "default/pod-1", D: [3]uint8{4, 5, 6}},
		{A: 1, B: 2, C: 4, S: "default/pod-1", D: [3]uint8{4, 5, 6}},
		{A: 1, B: 2, C: 3, S: "default/pod-2", D: [3]uint8{4, 5, 6}},
		{A: 1, B: 2, C: 3, S: "default/pod-1", D: [3]uint8{4, 5, 7}},
	} {
		h, _ := HashWith(l, c)
		if seen[h] {
			t.Errorf("%+v hashes like another key", c)
		}
		seen[h] = true
	}
	ln := LayoutOf[nested]()
	x := nested{P: a, Q: [2]string{"a", "b"}}
	y := nested{P: b, Q: [2]string{"a", "b"}}
	hx, _ := HashWith(ln, x)
	hy, _ := HashWith(ln, y)
	z := x
	z.Q[1] = "c"
	hz, _ := HashWith(ln, z)
	if hx != hy || hx == hz {
		t.Errorf("nested: %x %x %x", hx, hy, hz)
	}
	// Non-plain kinds hash as Hash does.
	if LayoutOf[int]().Kind != Int64 || LayoutOf[float64]().Kind != Float || LayoutOf[any]().Kind != Dynamic {
		t.Error("kinds of int, float64, any")
	}
	if _, ok := HashWith(LayoutOf[any](), any([]int{1})); ok {
		t.Error("an unhashable key was hashed")
	}
}

// The low bits of layout hashes of keys that differ in a few bits look
// random: no bucket of a 1024-slot table gets far more than its share.
func TestLayoutHashSpreads(t *testing.T) {
	t.Parallel()
	type jobKey struct {
		Tenant uint32
		ID     uint64
	}
	l := LayoutOf[jobKey]()
	const n, slots = 1 << 16, 1024
	var buckets [slots]int
	for i := range n {
		h, _ := HashWith(l, jobKey{Tenant: uint32(i % 16), ID: uint64(i/16) << 20})
		buckets[h%slots]++
	}
	for i, c := range buckets {
		if c > 3*n/slots {
			t.Fatalf("bucket %d holds %d of %d keys", i, c, n)
		}
	}
}

// Blank fields take no part in ==, so none in the hash: two keys that
// differ only there are equal and hash equal.
func TestLayoutHashIgnoresBlankFields(t *testing.T) {
	t.Parallel()
	type blank struct {
		A int
		_ int
		S string
		_ [2]uint8
	}
	a, b := blank{A: 1, S: "x"}, blank{A: 1, S: "x"}
	*(*int)(unsafe.Add(unsafe.Pointer(&b), unsafe.Sizeof(int(0)))) = 42 // the first blank field
	if a != b {
		t.Fatal("keys differing in a blank field are not equal")
	}
	l := LayoutOf[blank]()
	ha, _ := HashWith(l, a)
	hb, _ := HashWith(l, b)
	if ha != hb {
		t.Errorf("equal keys that differ in a blank field hash %x and %x", ha, hb)
	}
}

// Describe names a key in constant time, whatever the key holds: a float
// by its value, anything else by its type alone. Before, it formatted the
// whole key with %#v: a slice that holds itself overflowed the stack.
func TestDescribeNeverWalksTheKey(t *testing.T) {
	self := make([]any, 1)
	self[0] = self
	for _, c := range []struct {
		k    any
		want string
	}{
		{self, "of type []interface {}"},
		{make([]byte, 1<<20), "of type []uint8"},
		{math.NaN(), "NaN (float64)"},
		{complex(math.NaN(), 1), "(NaN+1i) (complex128)"},
		{struct{ F float64 }{math.NaN()}, "of type struct { F float64 }"},
		{nil, "of type <nil>"},
	} {
		if got := Describe(c.k); got != c.want {
			t.Errorf("Describe(%T) = %q, want %q", c.k, got, c.want)
		}
	}
}
