package main

import (
	"fmt"
	"io/fs"
	"testing"
)

func TestAvailableMemory(t *testing.T) {
	const meminfo = "MemTotal:       24684084 kB\nMemFree:         1000000 kB\n"
	for _, c := range []struct {
		name  string
		files map[string]string
		want  int64
	}{
		{"machine only", map[string]string{"/proc/meminfo": meminfo}, 24684084 << 10},
		{"cgroup v2 unlimited", map[string]string{"/proc/meminfo": meminfo, "/sys/fs/cgroup/memory.max": "max\n"}, 24684084 << 10},
		{"cgroup v2 limit", map[string]string{"/proc/meminfo": meminfo, "/sys/fs/cgroup/memory.max": "1073741824\n"}, 1 << 30},
		{"cgroup v1 unlimited", map[string]string{"/proc/meminfo": meminfo, "/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n"}, 24684084 << 10},
		{"cgroup v1 limit", map[string]string{"/proc/meminfo": meminfo, "/sys/fs/cgroup/memory/memory.limit_in_bytes": "536870912\n"}, 512 << 20},
		{"cgroup limit, no meminfo", map[string]string{"/sys/fs/cgroup/memory.max": "2147483648"}, 2 << 30},
		{"nothing readable", map[string]string{}, 0},
		{"malformed", map[string]string{"/proc/meminfo": "MemTotal: lots\n", "/sys/fs/cgroup/memory.max": "-5"}, 0},
	} {
		read := func(p string) ([]byte, error) {
			if s, ok := c.files[p]; ok {
				return []byte(s), nil
			}
			return nil, fmt.Errorf("%s: %w", p, fs.ErrNotExist)
		}
		if got := availableMemory(read); got != c.want {
			t.Errorf("%s: %d bytes, want %d", c.name, got, c.want)
		}
	}
}

func TestRouterGC(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	for _, c := range []struct {
		name    string
		env     map[string]string
		avail   int64
		percent int
		limit   int64
	}{
		{"defaults", nil, 8 << 30, routerGCPercent, 6 << 30},
		{"GOGC set", map[string]string{"GOGC": "100"}, 8 << 30, -1, 6 << 30},
		{"GOGC off", map[string]string{"GOGC": "off"}, 8 << 30, -1, 6 << 30},
		{"GOMEMLIMIT set", map[string]string{"GOMEMLIMIT": "512MiB"}, 8 << 30, routerGCPercent, -1},
		{"both set", map[string]string{"GOGC": "200", "GOMEMLIMIT": "1GiB"}, 8 << 30, -1, -1},
		{"memory unknown", nil, 0, routerGCPercent, -1},
	} {
		p, l := routerGC(env(c.env), c.avail)
		if p != c.percent || l != c.limit {
			t.Errorf("%s: GOGC %d, limit %d; want %d, %d", c.name, p, l, c.percent, c.limit)
		}
	}
}
