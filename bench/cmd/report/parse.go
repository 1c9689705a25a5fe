package main

import (
	"bufio"
	"io"
	"slices"
	"strconv"
	"strings"
)

// result is every measurement of one benchmark, by unit.
type result struct {
	name   string               // without the "Benchmark" prefix and the -cpu suffix
	keys   map[string]string    // the name's key=value segments
	values map[string][]float64 // unit → one value per run
}

// header holds go test's preamble lines (goos, goarch, pkg, cpu).
type header map[string]string

// data is a parsed go test -bench output.
type data struct {
	results map[string]*result
	order   []string // names in the order they first appear
	hdr     header
}

// parse reads go test -bench output: benchmark lines and the preamble.
// Lines it does not understand are skipped.
func parse(r io.Reader) (*data, error) {
	results := map[string]*result{}
	var order []string
	hdr := header{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if k, v, ok := strings.Cut(line, ": "); ok && !strings.HasPrefix(line, "Benchmark") && !strings.ContainsAny(k, " \t") {
			hdr[k] = strings.TrimSpace(v)
			continue
		}
		if !strings.HasPrefix(line, "Benchmark") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 4 || len(fields)%2 != 0 {
			continue
		}
		if _, err := strconv.Atoi(fields[1]); err != nil {
			continue
		}
		name := strings.TrimPrefix(fields[0], "Benchmark")
		if i := strings.LastIndex(name, "-"); i > 0 && !strings.Contains(name[i:], "/") {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		res := results[name]
		if res == nil {
			res = &result{name: name, keys: keysOf(name), values: map[string][]float64{}}
			results[name] = res
			order = append(order, name)
		}
		for i := 2; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				continue
			}
			res.values[fields[i+1]] = append(res.values[fields[i+1]], v)
		}
	}
	return &data{results: results, order: order, hdr: hdr}, sc.Err()
}

// keysOf returns the key=value segments of a benchmark name, and the first
// segment under the key "scenario". Scenario 1 (MPMC) results from before the
// keys, path and backlog dimensions get their values then: ordered, work,
// small.
func keysOf(name string) map[string]string {
	segs := strings.Split(name, "/")
	keys := map[string]string{"scenario": segs[0]}
	for _, s := range segs[1:] {
		if k, v, ok := strings.Cut(s, "="); ok {
			keys[k] = v
		}
	}
	if keys["scenario"] == "MPMC" {
		for k, v := range map[string]string{"keys": "ordered", "path": "work", "backlog": "small"} {
			if keys[k] == "" {
				keys[k] = v
			}
		}
	}
	return keys
}

// median returns the median of the unit's values, and false if there are none.
func (r *result) median(unit string) (float64, bool) {
	if r == nil {
		return 0, false
	}
	vs := r.values[unit]
	if len(vs) == 0 {
		return 0, false
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2], true
	}
	return (s[n/2-1] + s[n/2]) / 2, true
}

// runs returns the number of runs behind the result.
func (r *result) runs() int {
	if r == nil {
		return 0
	}
	return len(r.values["ns/op"])
}

// withImpl returns name with its impl= segment set to impl.
func withImpl(name, impl string) string { return with(name, "impl", impl) }

// with returns name with its key= segment set to value. A name without such
// a segment is returned as it is.
func with(name, key, value string) string {
	segs := strings.Split(name, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, key+"=") {
			segs[i] = key + "=" + value
		}
	}
	return strings.Join(segs, "/")
}
