package governor

import (
	"context"
	"testing"
	"testing/fstest"
)

// A mount whose source is the empty string (mount -t tmpfs "" /x, which
// mount(2) allows and recent kernels still print as two spaces) is valid
// mountinfo. One such line, anywhere in the file, must not stop the
// SystemSampler from finding the process's cgroup, nor fail every sample.
func TestMountinfoWithAnEmptySource(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"proc/self/cgroup": {Data: []byte("0::/app\n")},
		"proc/self/mountinfo": {Data: []byte(
			"31 23 0:28 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n" +
				"74 25 0:59 / /mnt/tmpfs rw,relatime shared:38 - tmpfs  rw\n" +
				"75 25 0:60 / /mnt/cg rw,relatime - cgroup2  rw\n")},
		"sys/fs/cgroup/app/memory.max":     {Data: []byte("1000\n")},
		"sys/fs/cgroup/app/memory.current": {Data: []byte("400\n")},
	}
	mounts, err := parseMountinfo(fsys["proc/self/mountinfo"].Data)
	if err != nil {
		t.Fatalf("parseMountinfo: %v", err)
	}
	if len(mounts) != 2 || mounts[1].point != "/mnt/cg" || mounts[1].options[0] != "rw" {
		t.Errorf("parseMountinfo = %+v, want the two cgroup2 mounts, the second with options [rw]", mounts)
	}
	cg, err := findCgroups(fsys)
	if err != nil {
		t.Fatalf("findCgroups: %v", err)
	}
	if got, err := cg.read(); err != nil || got.memLimit != 1000 || got.memUsed != 400 {
		t.Errorf("read() = %+v, %v; want the cgroup's limit of 1000 bytes, 400 used", got, err)
	}
	s := &SystemSampler{Root: fsys}
	if _, err := s.Sample(context.Background()); err != nil {
		t.Errorf("SystemSampler.Sample: %v; want a reading", err)
	}
}
