package bench

import (
	"strconv"
	"testing"
)

// JobID is a named integer type, the shape of an ID type a service declares
// for its jobs. Its keys are the integers of keys=ordered under another type.
type JobID int64

// jobKey is the small struct key of keys=struct: a job's tenant and its ID,
// 16 bytes with 4 of padding, comparable with ==, the shape of a composite
// key a multi-tenant service uses instead of formatting a string.
type jobKey struct {
	Tenant uint32
	ID     uint64
}

// keyKind is one key kind of BenchmarkMPMC and TestImplsProcessEveryItemOnce:
// what the keys look like and which producer adds which. Its methods run the
// sub-benchmarks and subtests below keys=<name>, with keys of the kind's own
// type.
type keyKind interface {
	name() string
	// mpmc runs scenario 1 with these keys (see BenchmarkMPMC).
	mpmc(b *testing.B)
	// everyItemOnce runs TestImplsProcessEveryItemOnce with these keys.
	everyItemOnce(t *testing.T)
}

// keys is a keyKind with keys of type K.
type keys[K comparable] struct {
	kind string
	// key returns the key of index i. Distinct indexes have distinct keys,
	// and the key of an index does not depend on how many keys are made.
	key func(i int) K
	// ranges: producer p of P adds the indexes [p·n/P, (p+1)·n/P) of the n
	// it adds, in order. Otherwise producer p adds p, p+P, p+2P, …, so that
	// together the producers add the indexes roughly in order.
	ranges bool
	made   []K // keys made so far, by index
}

func (k *keys[K]) name() string { return k.kind }

// slice returns the keys of indexes 0..n-1, made once and kept until release,
// so that every implementation gets the same keys and no timed region pays
// for making them (formatting strings, say).
func (k *keys[K]) slice(n int) []K {
	if len(k.made) < n {
		made := make([]K, n)
		copy(made, k.made)
		for i := len(k.made); i < n; i++ {
			made[i] = k.key(i)
		}
		k.made = made
	}
	return k.made[:n]
}

// release drops the keys made, so that they do not weigh on the garbage
// collector while other kinds run.
func (k *keys[K]) release() { k.made = nil }

// share returns the indexes, out of n, that producer p of producers adds, in
// the order it adds them, as a start, an end and a step.
func (k *keys[K]) share(p, producers, n int) (from, to, step int) {
	if k.ranges {
		return p * n / producers, (p + 1) * n / producers, 1
	}
	return p, n, producers
}

// keyKinds are the key kinds of scenario 1, in the order the benchmarks and
// the report show them.
var keyKinds = []keyKind{
	// IDs in order: producer p adds p, p+P, …
	&keys[int]{kind: "ordered", key: func(i int) int { return i }},
	// IDs from producers that each own a range and add it in order.
	&keys[int]{kind: "ranges", key: func(i int) int { return i }, ranges: true},
	// IDs that look random: i times an odd constant, a bijection.
	&keys[int]{kind: "scrambled", key: scramble},
	// client-go's namespace/name keys.
	&keys[string]{kind: "string", key: func(i int) string { return "default/pod-" + strconv.Itoa(i) }},
	// A small struct: tenant and ID.
	&keys[jobKey]{kind: "struct", key: func(i int) jobKey { return jobKey{Tenant: uint32(i % 16), ID: uint64(i)} }},
	// A named integer type: type JobID int64.
	&keys[JobID]{kind: "named", key: func(i int) JobID { return JobID(i) }},
}

// scramble maps x to a distinct key that looks random.
func scramble(x int) int { return int(uint64(x) * 0x9E3779B97F4A7C15) }
