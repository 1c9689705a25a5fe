// Package keys classifies key types once, by reflection, so that queues pay
// only for the checks a key type needs: integer keys can be placed by value,
// keys that can hold NaN must be checked for it, and keys that hold an
// interface may not be hashable at all.
package keys

import (
	"fmt"
	"hash/maphash"
	"math/bits"
	"math/rand/v2"
	"reflect"
	"sync"
	"unsafe"
)

// Seed keys the hashes of every key that is not an integer. It is random per
// process, as the runtime's map seeds are, and shared so that a key can be
// hashed before a queue's lock is taken.
var Seed = maphash.MakeSeed()

// Kind says how keys of one type are hashed and checked. It is found once
// per queue, by reflection on the type (Of), so that a key type pays only
// for the checks it needs:
//
//   - Integer types, named or not, of 1, 2, 4 or 8 bytes: the key's value is
//     its hash, so that a table can place keys by value.
//   - Types that can hold neither a float nor an interface: maphash.
//   - Types that can hold a float or a complex number (a struct or array of
//     them too) may hold NaN, which is not equal to itself and so could
//     never be found again: such a key is refused.
//   - Types that hold an interface may hold NaN, or a value that cannot be
//     hashed at all (a slice in an any): such a key is refused, with a
//     recover around the one comparison that finds out.
type Kind uint8

const (
	// Unknown is the zero Kind: not classified yet.
	Unknown Kind = iota
	// Int8, Int16, Int32 and Int64 are integer types of that size, named or
	// not: the value is the hash.
	Int8
	Int16
	Int32
	Int64
	// Plain types can hold neither a float nor an interface: maphash.
	Plain
	// Float types can hold NaN: checked, then maphash.
	Float
	// Dynamic types hold an interface: checked under recover, then maphash.
	Dynamic
)

// Integer reports whether the hash of a key of kind k is its value.
func (k Kind) Integer() bool { return k >= Int8 && k <= Int64 }

// Of returns the Kind of K.
func Of[K comparable]() Kind {
	t := reflect.TypeFor[K]()
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		switch t.Size() {
		case 1:
			return Int8
		case 2:
			return Int16
		case 4:
			return Int32
		case 8:
			return Int64
		}
	}
	switch {
	case holds(t, reflect.Interface):
		return Dynamic
	case holds(t, reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128):
		return Float
	}
	return Plain
}

// holds reports whether a value of type t can contain a value of one of the
// kinds, directly or in a field or element.
func holds(t reflect.Type, kinds ...reflect.Kind) bool {
	for _, k := range kinds {
		if t.Kind() == k {
			return true
		}
	}
	switch t.Kind() {
	case reflect.Array:
		return holds(t.Elem(), kinds...)
	case reflect.Struct:
		for i := range t.NumField() {
			if holds(t.Field(i).Type, kinds...) {
				return true
			}
		}
	}
	return false
}

// Hash returns the hash of k, a key of kind kind, and true; or false if k
// cannot be a key: it is not equal to itself (NaN, or a value holding one)
// or cannot be hashed. Hashes are keyed by a seed random per process.
func Hash[K comparable](kind Kind, k K) (uint64, bool) {
	p := unsafe.Pointer(&k)
	switch kind {
	case Int64:
		return *(*uint64)(p), true
	case Int32:
		return uint64(*(*uint32)(p)), true
	case Int16:
		return uint64(*(*uint16)(p)), true
	case Int8:
		return uint64(*(*uint8)(p)), true
	case Plain:
		return maphash.Comparable(Seed, k), true
	case Float:
		if k != k {
			return 0, false
		}
		return maphash.Comparable(Seed, k), true
	}
	return hashDynamic(k)
}

// hashDynamic is Hash for a type that holds an interface, whose dynamic
// value may not be comparable: comparing it panics, and so does hashing it.
func hashDynamic[K comparable](k K) (h uint64, ok bool) {
	defer func() {
		if recover() != nil {
			h, ok = 0, false
		}
	}()
	if k != k {
		return 0, false
	}
	return maphash.Comparable(Seed, k), true
}

// Valid reports whether k, of kind kind, can be a key: whether it is equal
// to itself and can be hashed. It never panics.
func Valid[K comparable](kind Kind, k K) bool {
	switch kind {
	case Float:
		return k == k
	case Dynamic:
		_, ok := hashDynamic(k)
		return ok
	}
	return true
}

// Describe formats a key for an error message, briefly, without panicking
// and in constant time: it never walks the key (which may be large, or refer
// to itself through an interface) nor calls its methods. A float or complex
// number is shown with its value, anything else by its type.
func Describe[K any](k K) string {
	switch v := reflect.ValueOf(any(k)); v.Kind() {
	case reflect.Float32, reflect.Float64:
		return fmt.Sprintf("%v (%T)", v.Float(), k)
	case reflect.Complex64, reflect.Complex128:
		return fmt.Sprintf("%v (%T)", v.Complex(), k)
	}
	return fmt.Sprintf("of type %T", k)
}

// A Layout says how to hash the keys of one type: its Kind and, for a Plain
// type, where its bytes and strings are. Hashing a Plain struct or array by
// its layout reads its significant bytes a word at a time (padding left out)
// and hashes each string's contents, several times faster than
// maphash.Comparable, which walks the fields of the type for every key.
// LayoutOf finds it once per type.
type Layout struct {
	Kind  Kind
	spans []span    // byte ranges that count, merged, for a Plain key
	strs  []uintptr // offsets of strings, for a Plain key
	str   bool      // a Plain key that is a string
}

// span is a byte range [off, off+n) of a key.
type span struct{ off, n uintptr }

var layouts sync.Map // reflect.Type → *Layout

// LayoutOf returns the Layout of K. It is cached per type.
func LayoutOf[K comparable]() *Layout {
	t := reflect.TypeFor[K]()
	if l, ok := layouts.Load(t); ok {
		return l.(*Layout)
	}
	l := &Layout{Kind: Of[K]()}
	if l.Kind == Plain {
		l.scan(t, 0)
		l.str = t.Kind() == reflect.String
	}
	got, _ := layouts.LoadOrStore(t, l)
	return got.(*Layout)
}

// scan adds the bytes and strings of a value of type t at offset off.
func (l *Layout) scan(t reflect.Type, off uintptr) {
	switch t.Kind() {
	case reflect.String:
		l.strs = append(l.strs, off)
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Name == "_" {
				continue // == ignores blank fields: so must the hash
			}
			l.scan(f.Type, off+f.Offset)
		}
	case reflect.Array:
		e := t.Elem()
		for i := range t.Len() {
			l.scan(e, off+uintptr(i)*e.Size())
		}
	default: // integers, bools, pointers, channels: their bytes
		if t.Size() == 0 {
			return
		}
		if n := len(l.spans); n > 0 && l.spans[n-1].off+l.spans[n-1].n == off {
			l.spans[n-1].n += t.Size()
			return
		}
		l.spans = append(l.spans, span{off, t.Size()})
	}
}

// HashWith is Hash for a key of the type l describes.
func HashWith[K comparable](l *Layout, k K) (uint64, bool) {
	if l.Kind != Plain {
		return Hash(l.Kind, k)
	}
	return l.hash(unsafe.Pointer(&k)), true
}

// The keys of the layout hash: random per process, as the runtime's map
// seeds are.
var hashKey0, hashKey1, hashMul = rand.Uint64(), rand.Uint64(), rand.Uint64() | 1

// mix folds v into h: a keyed 64×64→128-bit multiply, folded (wyhash's
// construction).
func mix(h, v uint64) uint64 {
	hi, lo := bits.Mul64(h^v^hashKey0, hashMul)
	return hi ^ lo
}

// hash hashes the key at p.
func (l *Layout) hash(p unsafe.Pointer) uint64 {
	if l.str {
		return maphash.String(Seed, *(*string)(p))
	}
	h := hashKey1
	for _, s := range l.spans {
		q, n := unsafe.Add(p, s.off), s.n
		for ; n >= 8; n -= 8 {
			h = mix(h, *(*uint64)(q))
			q = unsafe.Add(q, 8)
		}
		if n > 0 {
			h = mix(h, tail(q, n))
		}
	}
	for _, off := range l.strs {
		h = mix(h, maphash.String(Seed, *(*string)(unsafe.Add(p, off))))
	}
	hi, lo := bits.Mul64(h^hashKey1, hashMul) // a last round, so that one word is mixed twice
	return hi ^ lo
}

// tail reads the n < 8 bytes at p.
func tail(p unsafe.Pointer, n uintptr) uint64 {
	var v uint64
	if n >= 4 {
		v = uint64(*(*uint32)(p))
		p, n = unsafe.Add(p, 4), n-4
		if n == 0 {
			return v
		}
		return v | tail(p, n)<<32
	}
	for i := range n {
		v |= uint64(*(*uint8)(unsafe.Add(p, i))) << (8 * i)
	}
	return v
}
