package governor

import (
	"testing"
	"testing/fstest"
)

// TestCgroupOfSeveralMounts: the hierarchy is mounted twice, first at a
// mount whose root is another cgroup (a bind mount of another slice), then
// at /sys/fs/cgroup with the whole hierarchy. The process's cgroup is
// under the second mount only: the first must not stand in for it, or
// the limits read are those of the other slice.
func TestCgroupOfSeveralMounts(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, cgroup, mountinfo string
		memory                  cgroupDir
	}{{
		name:   "v2",
		cgroup: "0::/user.slice/app.service\n",
		mountinfo: "30 1 0:26 /other.slice /run/other rw - cgroup2 cgroup2 rw\n" +
			"31 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
		memory: cgroupDir{SourceCgroupV2, "sys/fs/cgroup", "sys/fs/cgroup/user.slice/app.service"},
	}, {
		name:   "v1",
		cgroup: "4:memory:/user.slice/app.service\n",
		mountinfo: "30 1 0:27 /other.slice /run/other rw - cgroup cgroup rw,memory\n" +
			"31 1 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
		memory: cgroupDir{SourceCgroupV1, "sys/fs/cgroup/memory", "sys/fs/cgroup/memory/user.slice/app.service"},
	}, {
		// No mount holds the cgroup: the first mount's point, as before.
		name:   "none holds it",
		cgroup: "0::/elsewhere\n",
		mountinfo: "30 1 0:26 /other.slice /run/other rw - cgroup2 cgroup2 rw\n" +
			"31 1 0:26 /third.slice /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
		memory: cgroupDir{SourceCgroupV2, "run/other", "run/other"},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fsys := fstest.MapFS{
				"proc/self/cgroup":    {Data: []byte(tt.cgroup)},
				"proc/self/mountinfo": {Data: []byte(tt.mountinfo)},
				"run/other/x":         {},
				"sys/fs/cgroup/user.slice/app.service/memory.max":        {Data: []byte("max\n")},
				"sys/fs/cgroup/memory/user.slice/app.service/memory.max": {Data: []byte("max\n")},
			}
			cg, err := findCgroups(fsys)
			if err != nil {
				t.Fatal(err)
			}
			if cg.memory != tt.memory {
				t.Errorf("memory controller = %+v, want %+v", cg.memory, tt.memory)
			}
		})
	}
}
