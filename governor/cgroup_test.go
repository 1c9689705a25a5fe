package governor

import (
	"io/fs"
	"os"
	"testing"
	"testing/fstest"
	"time"
)

func TestCgroupFixtures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tree   string
		memory cgroupDir
		want   cgroupReading
	}{{
		tree:   "v2-nested",
		memory: cgroupDir{SourceCgroupV2, "sys/fs/cgroup", "sys/fs/cgroup/user.slice/app.service"},
		want: cgroupReading{
			// The service has no limits; its parent slice has them.
			memSource: SourceCgroupV2, memLimit: 1 << 30, memUsed: 536870912 - 36870912,
			cpuSource: SourceCgroupV2, cpuCores: 1.5, cpuUsage: 9 * time.Second,
			cpuLevel: "sys/fs/cgroup/user.slice",
		},
	}, {
		tree:   "v2-container",
		memory: cgroupDir{SourceCgroupV2, "sys/fs/cgroup", "sys/fs/cgroup"},
		want: cgroupReading{
			memSource: SourceCgroupV2, memLimit: 64 << 20, memUsed: 16 << 20,
			cpuSource: SourceCgroupV2, cpuCores: 0.5, cpuUsage: 2500 * time.Millisecond,
			cpuLevel: "sys/fs/cgroup",
		},
	}, {
		tree:   "v2-unlimited",
		memory: cgroupDir{SourceCgroupV2, "sys/fs/cgroup", "sys/fs/cgroup/system.slice/jobs.service"},
	}, {
		tree:   "v1-docker",
		memory: cgroupDir{SourceCgroupV1, "sys/fs/cgroup/memory", "sys/fs/cgroup/memory"},
		want: cgroupReading{
			memSource: SourceCgroupV1, memLimit: 256 << 20, memUsed: 80 << 20,
			cpuSource: SourceCgroupV1, cpuCores: 0.5, cpuUsage: 123 * time.Second,
			cpuLevel: "sys/fs/cgroup/cpu,cpuacct",
		},
	}, {
		tree:   "v1-hybrid-unlimited",
		memory: cgroupDir{SourceCgroupV1, "sys/fs/cgroup/memory", "sys/fs/cgroup/memory/process_api/33d4"},
	}, {
		tree:   "v1-nested",
		memory: cgroupDir{SourceCgroupV1, "sys/fs/cgroup/memory", "sys/fs/cgroup/memory/kubepods/pod1/c1"},
		want: cgroupReading{
			// The pod has less available than the container's own limit leaves;
			// the container has the smaller CPU quota.
			memSource: SourceCgroupV1, memLimit: 512 << 20, memUsed: 500000000,
			cpuSource: SourceCgroupV1, cpuCores: 0.25, cpuUsage: 5 * time.Second,
			cpuLevel: "sys/fs/cgroup/cpu/kubepods/pod1/c1",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.tree, func(t *testing.T) {
			t.Parallel()
			cg, err := findCgroups(os.DirFS("testdata/cgroup/" + tt.tree))
			if err != nil {
				t.Fatal(err)
			}
			if cg.memory != tt.memory {
				t.Errorf("memory controller = %+v, want %+v", cg.memory, tt.memory)
			}
			got, err := cg.read()
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("read() =\n %+v, want\n %+v", got, tt.want)
			}
		})
	}
}

func TestCgroupNone(t *testing.T) {
	t.Parallel()
	for name, fsys := range map[string]fstest.MapFS{
		"no proc":      {},
		"no mountinfo": {"proc/self/cgroup": {Data: []byte("0::/\n")}},
		"no mount":     {"proc/self/cgroup": {Data: []byte("0::/\n")}, "proc/self/mountinfo": {Data: []byte("22 27 0:21 / /proc rw - proc proc rw\n")}},
	} {
		cg, err := findCgroups(fsys)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := cg.read()
		if err != nil || got != (cgroupReading{}) {
			t.Errorf("%s: read() = %+v, %v; want no limits", name, got, err)
		}
	}
}

func TestCgroupMalformed(t *testing.T) {
	t.Parallel()
	base := func(files map[string]string) fstest.MapFS {
		fsys := fstest.MapFS{
			"proc/self/cgroup":    {Data: []byte("0::/app\n")},
			"proc/self/mountinfo": {Data: []byte("31 23 0:28 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n")},
		}
		for name, data := range files {
			fsys["sys/fs/cgroup/app/"+name] = &fstest.MapFile{Data: []byte(data)}
		}
		return fsys
	}
	for name, fsys := range map[string]fstest.MapFS{
		"memory.max":     base(map[string]string{"memory.max": "lots\n", "memory.current": "1\n"}),
		"memory.stat":    base(map[string]string{"memory.max": "10\n", "memory.current": "1\n", "memory.stat": "inactive_file -3\n"}),
		"cpu.max":        base(map[string]string{"cpu.max": "100000\n"}),
		"cpu.max zero":   base(map[string]string{"cpu.max": "0 100000\n"}),
		"cpu.stat":       base(map[string]string{"cpu.max": "1 2\n", "cpu.stat": "usage_usec x\n"}),
		"memory.current": base(map[string]string{"memory.max": "10\n", "memory.current": "\n"}),
	} {
		cg, err := findCgroups(fsys)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, err := cg.read(); err == nil {
			t.Errorf("%s: read() = %+v, want an error", name, got)
		}
	}
	if _, err := findCgroups(fstest.MapFS{
		"proc/self/cgroup":    {Data: []byte("0::/\n")},
		"proc/self/mountinfo": {Data: []byte("31 23 0:28 / /sys/fs/cgroup rw cgroup2 cgroup2 rw\n")},
	}); err == nil {
		t.Error("findCgroups with a mountinfo line without separator: want an error")
	}
}

func TestMountDir(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"sys/fs/cgroup/a b/c/x": {},
		"sys/fs/cgroup/c/x":     {},
	}
	tests := []struct {
		root, point, path, want string
	}{
		{"/", "/sys/fs/cgroup", "/c", "sys/fs/cgroup/c"},
		{"/", "/sys/fs/cgroup", "/missing", "sys/fs/cgroup"},          // no such directory
		{"/docker/1", "/sys/fs/cgroup", "/docker/1", "sys/fs/cgroup"}, // the mount is the cgroup
		{"/docker/1", "/sys/fs/cgroup", "/docker/1/c", "sys/fs/cgroup/c"},
		{"/docker/1", "/sys/fs/cgroup", "/docker/12", "sys/fs/cgroup"}, // not under the root
		{"/docker/1", "/sys/fs/cgroup", "/", "sys/fs/cgroup"},
		{"/", "/sys/fs/cgroup/a b", "/c", "sys/fs/cgroup/a b/c"},
	}
	for _, tt := range tests {
		m := mount{root: tt.root, point: tt.point}
		if got := m.dir(fsys, SourceCgroupV2, tt.path).leaf; got != tt.want {
			t.Errorf("mount{root %q, point %q}.dir(%q) = %q, want %q", tt.root, tt.point, tt.path, got, tt.want)
		}
	}
	mounts, err := parseMountinfo([]byte(`40 31 0:38 / /sys/fs/cgroup/a\040b rw - cgroup2 cgroup2 rw` + "\n"))
	if err != nil || len(mounts) != 1 || mounts[0].point != "/sys/fs/cgroup/a b" {
		t.Errorf("parseMountinfo with an escaped space = %+v, %v", mounts, err)
	}
}

func TestCgroupUnreadable(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"proc/self/cgroup":         {Data: []byte("0::/\n")},
		"proc/self/mountinfo":      {Data: []byte("31 23 0:28 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n")},
		"sys/fs/cgroup/memory.max": {Data: []byte("1000\n")},
	}
	cg, err := findCgroups(denyFS{fsys, "sys/fs/cgroup/memory.max"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := cg.read(); err != nil || got != (cgroupReading{}) {
		t.Errorf("read() with an unreadable memory.max = %+v, %v; want no limits", got, err)
	}
}

// denyFS refuses to open one file, as a file system does without permission.
type denyFS struct {
	fs.FS
	denied string
}

func (d denyFS) Open(name string) (fs.File, error) {
	if name == d.denied {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return d.FS.Open(name)
}
