package governor

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/shirou/gopsutil/v4/cpu"
)

// cpuRange is an inclusive range of CPU numbers.
type cpuRange struct{ lo, hi uint32 }

// cpuList is a parsed CPU list, the kernel's list format ("0-3,8,10-11"), as
// ranges sorted and merged: it takes memory in proportion to the text, not to
// the numbers.
type cpuList []cpuRange

// parseCPUList parses a CPU list. Spaces around the numbers are allowed; an
// empty list, a number that does not fit in 32 bits, a range whose end is
// below its start, or anything else is an error.
func parseCPUList(s string) (cpuList, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("governor: empty CPU list")
	}
	l := make(cpuList, 0, strings.Count(s, ",")+1)
	for part := range strings.SplitSeq(s, ",") {
		first, last, isRange := strings.Cut(part, "-")
		lo, err := strconv.ParseUint(strings.TrimSpace(first), 10, 32)
		if err != nil {
			return nil, fmt.Errorf("governor: CPU list %q: %w", s, err)
		}
		hi := lo
		if isRange {
			if hi, err = strconv.ParseUint(strings.TrimSpace(last), 10, 32); err != nil {
				return nil, fmt.Errorf("governor: CPU list %q: %w", s, err)
			}
			if hi < lo {
				return nil, fmt.Errorf("governor: CPU list %q: range %d-%d", s, lo, hi)
			}
		}
		l = append(l, cpuRange{uint32(lo), uint32(hi)})
	}
	slices.SortFunc(l, func(a, b cpuRange) int { return cmp.Compare(a.lo, b.lo) })
	merged := l[:1]
	for _, r := range l[1:] {
		last := &merged[len(merged)-1]
		if uint64(r.lo) <= uint64(last.hi)+1 {
			last.hi = max(last.hi, r.hi)
			continue
		}
		merged = append(merged, r)
	}
	return merged, nil
}

// rangeOf returns the index of the range of l that holds CPU n, or -1.
func (l cpuList) rangeOf(n uint32) int {
	i, _ := slices.BinarySearchFunc(l, n, func(r cpuRange, n uint32) int {
		switch {
		case r.hi < n:
			return -1
		case r.lo > n:
			return 1
		}
		return 0
	})
	if i < len(l) && l[i].lo <= n && n <= l[i].hi {
		return i
	}
	return -1
}

// contains reports whether the list names CPU n.
func (l cpuList) contains(n uint32) bool { return l.rangeOf(n) >= 0 }

// covers reports whether l names every CPU that m names.
func (l cpuList) covers(m cpuList) bool {
	for _, r := range m {
		// l's ranges are merged, so the one that holds r.lo holds all of r
		// or l lacks a CPU of r.
		if i := l.rangeOf(r.lo); i < 0 || l[i].hi < r.hi {
			return false
		}
	}
	return true
}

// count returns how many CPUs the list names.
func (l cpuList) count() uint64 {
	var n uint64
	for _, r := range l {
		n += uint64(r.hi-r.lo) + 1
	}
	return n
}

// readAffinity returns the CPUs this process may run on, from the
// Cpus_allowed_list line of proc/self/status under fsys, and whether that is
// fewer than the online CPUs (sys/devices/system/cpu/online; if that file is
// missing, restricted is true and the per-CPU times decide). ok is false if
// the status file or the line is missing (not Linux): the process is taken to
// run on every CPU. A malformed list is an error, as a malformed cgroup file is.
func readAffinity(fsys fs.FS) (allowed, online cpuList, restricted, ok bool, err error) {
	b, err := fs.ReadFile(fsys, "proc/self/status")
	if missing(err) {
		return nil, nil, false, false, nil
	}
	if err != nil {
		return nil, nil, false, false, err
	}
	var value []byte
	for line := range bytes.Lines(b) {
		if v, found := bytes.CutPrefix(line, []byte("Cpus_allowed_list:")); found {
			value, ok = v, true
			break
		}
	}
	if !ok {
		return nil, nil, false, false, nil
	}
	if allowed, err = parseCPUList(string(value)); err != nil {
		return nil, nil, false, false, fmt.Errorf("proc/self/status: Cpus_allowed_list: %w", err)
	}
	b, err = fs.ReadFile(fsys, "sys/devices/system/cpu/online")
	if missing(err) {
		return allowed, nil, true, true, nil
	}
	if err != nil {
		return nil, nil, false, false, err
	}
	if online, err = parseCPUList(string(b)); err != nil {
		return nil, nil, false, false, fmt.Errorf("sys/devices/system/cpu/online: %w", err)
	}
	return allowed, online, !allowed.covers(online), true, nil
}

// cpuNumber returns n for a per-CPU TimesStat named "cpuN".
func cpuNumber(name string) (uint32, bool) {
	digits, ok := strings.CutPrefix(name, "cpu")
	if !ok || digits == "" || digits[0] == '+' || digits[0] == '-' {
		return 0, false
	}
	n, err := strconv.ParseUint(digits, 10, 32)
	return uint32(n), err == nil
}

// sumAllowed sums the per-CPU times of the CPUs in allowed: the seconds busy
// and in total, how many CPUs were summed, and a hash of which, so that two
// sums can be told to be over the same CPUs. Entries not named "cpuN" are
// ignored.
func sumAllowed(times []cpu.TimesStat, allowed cpuList) (busy, total float64, cores int, set uint64) {
	h := fnv.New64a()
	var buf [4]byte
	for _, t := range times {
		n, ok := cpuNumber(t.CPU)
		if !ok || !allowed.contains(n) {
			continue
		}
		b, all := cpuSeconds(t)
		busy, total, cores = busy+b, total+all, cores+1
		buf = [4]byte{byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24)}
		h.Write(buf[:])
	}
	return busy, total, cores, h.Sum64()
}

// cpuSeconds returns the seconds busy and in total of one line of CPU times.
func cpuSeconds(t cpu.TimesStat) (busy, total float64) {
	total = t.User + t.System + t.Idle + t.Nice + t.Iowait + t.Irq + t.Softirq + t.Steal
	return total - t.Idle - t.Iowait, total
}
