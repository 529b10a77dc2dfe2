package cgroup

import "testing"

func TestCPUCgroup(t *testing.T) {
	v1 := "12:pids:/user.slice\n4:memory:/process_api/9890867e\n3:cpu,cpuacct:/system.slice/ci.service\n2:cpuset:/\n0::/\n"
	for _, c := range []struct {
		name, content string
		v2            bool
		want          string
		err           bool
	}{
		{"v1 joint cpu,cpuacct", v1, false, "/system.slice/ci.service", false},
		{"v1 cpu alone, cpuacct apart", "2:cpuacct:/a\n1:cpu:/\n0::/b\n", false, "/", false},
		{"v1 cpuset is not cpu", "3:cpuset:/x\n0::/y\n", false, "", true},
		{"v2", "0::/user.slice/user-0.slice/session-1.scope\n", true, "/user.slice/user-0.slice/session-1.scope", false},
		{"v2 on a hybrid machine", v1, true, "/", false},
		{"v2 none", "1:name=systemd:/\n", true, "", true},
	} {
		got, err := cpuCgroup(c.content, c.v2)
		if got != c.want || (err != nil) != c.err {
			t.Errorf("%s: %q, %v; want %q, error %v", c.name, got, err, c.want, c.err)
		}
	}
}
