package governor

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// cgroupV1Unlimited is the smallest cgroup v1 memory limit taken as "no limit":
// the kernel reports an unset limit as the largest page-aligned int64, whose
// exact value depends on the page size.
const cgroupV1Unlimited = 1 << 62

// cgroupDir locates one controller's hierarchy for this process, as paths in
// the sampler's file system (no leading slash).
type cgroupDir struct {
	version Source // SourceCgroupV1, SourceCgroupV2, or SourceUnknown when absent
	mount   string // the hierarchy's mount point
	leaf    string // this process's cgroup directory, at or under mount
}

// levels returns leaf and its ancestors up to and including mount.
func (d cgroupDir) levels() []string {
	var dirs []string
	for dir := d.leaf; ; dir = path.Dir(dir) {
		dirs = append(dirs, dir)
		if dir == d.mount || dir == "." {
			return dirs
		}
	}
}

// cgroups is where this process's memory and CPU controllers are.
type cgroups struct {
	fsys    fs.FS
	memory  cgroupDir
	cpu     cgroupDir // cpu.max, or cpu.cfs_quota_us and cpu.cfs_period_us
	cpuacct cgroupDir // v1 cpuacct.usage; unused for v2, where cpu.stat has it
}

// cgroupReading is what the cgroup files say. A zero source means the
// process has no limit of that kind.
type cgroupReading struct {
	memSource Source
	memLimit  uint64
	memUsed   uint64

	cpuSource Source
	cpuCores  float64       // quota ÷ period of the tightest level
	cpuUsage  time.Duration // CPU time used by that level's cgroup, cumulative
	cpuLevel  string        // that level, to tell whether two readings compare
}

// findCgroups reads proc/self/cgroup and proc/self/mountinfo under fsys and
// locates the memory and CPU controllers. A controller found in a cgroup v1
// hierarchy is preferred to the unified (v2) hierarchy, as the kernel does on
// hybrid systems. Missing or unreadable files mean no cgroups and are not an
// error.
func findCgroups(fsys fs.FS) (cgroups, error) {
	cg := cgroups{fsys: fsys}
	procCgroup, err := fs.ReadFile(fsys, "proc/self/cgroup")
	if missing(err) {
		return cg, nil
	}
	if err != nil {
		return cg, err
	}
	mountinfo, err := fs.ReadFile(fsys, "proc/self/mountinfo")
	if missing(err) {
		return cg, nil
	}
	if err != nil {
		return cg, err
	}
	mounts, err := parseMountinfo(mountinfo)
	if err != nil {
		return cg, err
	}

	find := func(controller string) cgroupDir {
		var v2 cgroupDir
		for line := range strings.Lines(string(procCgroup)) {
			// hierarchy-ID:controller-list:cgroup-path
			fields := strings.SplitN(strings.TrimSpace(line), ":", 3)
			if len(fields) != 3 {
				continue
			}
			if fields[0] == "0" && fields[1] == "" {
				if d, ok := mounts.dir(fsys, SourceCgroupV2, "cgroup2", "", fields[2]); ok {
					v2 = d
				}
				continue
			}
			for c := range strings.SplitSeq(fields[1], ",") {
				if c != controller {
					continue
				}
				if d, ok := mounts.dir(fsys, SourceCgroupV1, "cgroup", controller, fields[2]); ok {
					return d
				}
			}
		}
		return v2
	}
	cg.memory = find("memory")
	cg.cpu = find("cpu")
	cg.cpuacct = find("cpuacct")
	return cg, nil
}

// mount is one line of a mountinfo file.
type mount struct {
	root, point, fstype string
	options             []string // super options
}

type mountTable []mount

// parseMountinfo parses the lines of proc/PID/mountinfo that mount cgroups.
func parseMountinfo(b []byte) (mountTable, error) {
	var mounts mountTable
	for line := range strings.Lines(string(b)) {
		// 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			return nil, fmt.Errorf("governor: mountinfo line without separator: %q", line)
		}
		// After the separator the fields are split on single spaces: a
		// mount source may be the empty string (mount(2) allows it), which
		// the kernel prints as nothing between two spaces, and which
		// strings.Fields would drop, shifting the super options.
		left, right := strings.Fields(pre), strings.Split(strings.TrimRight(post, "\r\n"), " ")
		if len(left) < 5 || len(right) < 3 {
			return nil, fmt.Errorf("governor: short mountinfo line: %q", line)
		}
		if right[0] != "cgroup" && right[0] != "cgroup2" {
			continue
		}
		mounts = append(mounts, mount{
			root:    unescapeMount(left[3]),
			point:   unescapeMount(left[4]),
			fstype:  right[0],
			options: strings.Split(right[2], ","),
		})
	}
	return mounts, nil
}

// dir returns the directory of cgroup path cgPath among the mounts of
// fstype whose super options include controller (any mount when controller
// is empty): in the first of them that holds it, its root a prefix of
// cgPath and the directory there; or, if none does, as the first of them
// gives it (see mount.dir). A hierarchy may be mounted several times, with
// different roots (a bind mount of one cgroup somewhere else, say), and the
// first mount listed need not be the one that holds the process's cgroup.
// False if no mount matches.
func (t mountTable) dir(fsys fs.FS, v Source, fstype, controller, cgPath string) (cgroupDir, bool) {
	var first cgroupDir
	found := false
	for _, m := range t {
		if m.fstype != fstype || (controller != "" && !slices.Contains(m.options, controller)) {
			continue
		}
		d, holds := m.resolve(fsys, v, cgPath)
		if holds {
			return d, true
		}
		if !found {
			first, found = d, true
		}
	}
	return first, found
}

// dir returns the directory of cgroup path cgPath in mount m. When the path is
// not under the mount's root, or the directory is missing (as in some
// containers without a cgroup namespace), the mount point itself is used.
func (m mount) dir(fsys fs.FS, v Source, cgPath string) cgroupDir {
	d, _ := m.resolve(fsys, v, cgPath)
	return d
}

// resolve is dir, and reports whether m holds cgPath: the path is under
// its root and its directory exists.
func (m mount) resolve(fsys fs.FS, v Source, cgPath string) (cgroupDir, bool) {
	mnt := strings.TrimPrefix(path.Clean(m.point), "/")
	if mnt == "" {
		mnt = "."
	}
	d := cgroupDir{version: v, mount: mnt, leaf: mnt}
	rel, ok := strings.CutPrefix(path.Clean(cgPath), path.Clean(m.root))
	if !ok || (rel != "" && rel[0] != '/' && m.root != "/") {
		return d, false
	}
	leaf := path.Join(mnt, rel)
	if fi, err := fs.Stat(fsys, leaf); err == nil && fi.IsDir() {
		d.leaf = leaf
		return d, true
	}
	return d, false
}

// unescapeMount undoes the octal escapes (\040 for a space) of mountinfo paths.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// read reads the limits and usage of every level of the process's cgroups and
// returns the tightest: the level with the least memory available, and the
// level with the smallest CPU quota.
func (cg cgroups) read() (cgroupReading, error) {
	var r cgroupReading
	if cg.memory.version != SourceUnknown {
		bestAvail := uint64(math.MaxUint64)
		for _, dir := range cg.memory.levels() {
			limit, used, ok, err := cg.readMemory(cg.memory.version, dir)
			if err != nil {
				return r, err
			}
			if !ok {
				continue
			}
			if avail := limit - min(used, limit); avail < bestAvail {
				bestAvail = avail
				r.memSource, r.memLimit, r.memUsed = cg.memory.version, limit, min(used, limit)
			}
		}
	}
	if cg.cpu.version != SourceUnknown {
		for _, dir := range cg.cpu.levels() {
			cores, ok, err := cg.readQuota(cg.cpu.version, dir)
			if err != nil {
				return r, err
			}
			if ok && (r.cpuSource == SourceUnknown || cores < r.cpuCores) {
				r.cpuSource, r.cpuCores, r.cpuLevel = cg.cpu.version, cores, dir
			}
		}
		if r.cpuSource != SourceUnknown {
			usage, ok, err := cg.readCPUUsage(r.cpuLevel)
			if err != nil {
				return r, err
			}
			if !ok { // a quota but no usage counter: no cgroup CPU figure
				r.cpuSource, r.cpuCores, r.cpuLevel = SourceUnknown, 0, ""
			}
			r.cpuUsage = usage
		}
	}
	return r, nil
}

// readMemory returns the memory limit of the cgroup at dir and its working
// set; ok is false if the cgroup has no limit.
func (cg cgroups) readMemory(v Source, dir string) (limit, used uint64, ok bool, err error) {
	limitFile, usageFile, inactiveKey := "memory.max", "memory.current", "inactive_file"
	if v == SourceCgroupV1 {
		limitFile, usageFile, inactiveKey = "memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"
	}
	s, ok, err := cg.readString(path.Join(dir, limitFile))
	if !ok || err != nil || s == "max" {
		return 0, 0, false, err
	}
	if limit, err = parseUint(dir, limitFile, s); err != nil {
		return 0, 0, false, err
	}
	if v == SourceCgroupV1 && limit >= cgroupV1Unlimited {
		return 0, 0, false, nil
	}
	s, ok, err = cg.readString(path.Join(dir, usageFile))
	if !ok || err != nil {
		return 0, 0, false, err
	}
	if used, err = parseUint(dir, usageFile, s); err != nil {
		return 0, 0, false, err
	}
	inactive, _, err := cg.readKey(dir, "memory.stat", inactiveKey)
	if err != nil {
		return 0, 0, false, err
	}
	return limit, used - min(inactive, used), true, nil
}

// readQuota returns the CPU quota of the cgroup at dir in cores; ok is false
// if it has none.
func (cg cgroups) readQuota(v Source, dir string) (cores float64, ok bool, err error) {
	var quota, period string
	if v == SourceCgroupV2 {
		s, ok, err := cg.readString(path.Join(dir, "cpu.max"))
		if !ok || err != nil {
			return 0, false, err
		}
		var found bool
		if quota, period, found = strings.Cut(s, " "); !found {
			return 0, false, fmt.Errorf("governor: %s/cpu.max: want \"quota period\", got %q", dir, s)
		}
	} else {
		var okQ, okP bool
		if quota, okQ, err = cg.readString(path.Join(dir, "cpu.cfs_quota_us")); err != nil {
			return 0, false, err
		}
		if period, okP, err = cg.readString(path.Join(dir, "cpu.cfs_period_us")); err != nil {
			return 0, false, err
		}
		if !okQ || !okP {
			return 0, false, nil
		}
	}
	if quota == "max" || quota == "-1" {
		return 0, false, nil
	}
	q, err := parseUint(dir, "CPU quota", quota)
	if err != nil {
		return 0, false, err
	}
	p, err := parseUint(dir, "CPU period", period)
	if err != nil {
		return 0, false, err
	}
	if q == 0 || p == 0 {
		return 0, false, fmt.Errorf("governor: %s: CPU quota %d / period %d", dir, q, p)
	}
	return float64(q) / float64(p), true, nil
}

// readCPUUsage returns the cumulative CPU time of the cgroup whose quota is at
// level (a directory of cg.cpu); ok is false if its counter is missing.
func (cg cgroups) readCPUUsage(level string) (time.Duration, bool, error) {
	if cg.cpu.version == SourceCgroupV2 {
		us, ok, err := cg.readKey(level, "cpu.stat", "usage_usec")
		return time.Duration(us) * time.Microsecond, ok, err
	}
	if cg.cpuacct.version != SourceCgroupV1 {
		return 0, false, nil
	}
	rel := strings.TrimPrefix(level, cg.cpu.mount)
	dir := path.Join(cg.cpuacct.mount, rel)
	s, ok, err := cg.readString(path.Join(dir, "cpuacct.usage"))
	if !ok || err != nil {
		return 0, false, err
	}
	ns, err := parseUint(dir, "cpuacct.usage", s)
	return time.Duration(ns), err == nil, err
}

// readString returns the trimmed contents of name; ok is false if it is missing.
func (cg cgroups) readString(name string) (s string, ok bool, err error) {
	b, err := fs.ReadFile(cg.fsys, name)
	if missing(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return string(bytes.TrimSpace(b)), true, nil
}

// readKey returns the value of key in a flat-keyed file such as memory.stat
// ("key value" lines); ok is false if the file or the key is missing.
func (cg cgroups) readKey(dir, file, key string) (v uint64, ok bool, err error) {
	b, err := fs.ReadFile(cg.fsys, path.Join(dir, file))
	if missing(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, val, _ := strings.Cut(sc.Text(), " ")
		if k == key {
			v, err = parseUint(dir, file, strings.TrimSpace(val))
			return v, err == nil, err
		}
	}
	return 0, false, sc.Err()
}

// missing reports whether err means a file is not there or may not be read:
// either way the process gets no limit from it.
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission)
}

func parseUint(dir, what, s string) (uint64, error) {
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("governor: %s: %s: %w", dir, what, err)
	}
	return v, nil
}
