package main

import (
	"bytes"
	"log/slog"
	"os"
	"runtime/debug"
	"strconv"
)

// routerGCPercent is the collector's target (GOGC) of serve when it routes
// (--backend): a router's live heap is small (the calls in flight) and each
// call leaves about 18 KB of garbage, so at Go's default of 100 it collects
// about every 0.6 s at 1,000 calls/s; at 400 a quarter as often, for a heap
// of up to five times the live one instead of twice (docs/results-router.md
// §4). The soft memory limit (GOMEMLIMIT), three quarters of the memory the
// process may use, keeps that larger heap from running the process out of
// memory: near it the collector works harder instead (the last quarter is
// left to what Go's limit does not count, ONNX Runtime's memory among it).
const routerGCPercent = 400

// routerGC is the collector setting of a routing serve: GOGC and
// GOMEMLIMIT from the environment win; otherwise routerGCPercent, and a
// memory limit of three quarters of avail (none when avail is unknown, 0).
// percent and limit < 0: unchanged.
func routerGC(getenv func(string) string, avail int64) (percent int, limit int64) {
	percent, limit = -1, -1
	if getenv("GOGC") == "" {
		percent = routerGCPercent
	}
	if getenv("GOMEMLIMIT") == "" && avail > 0 {
		limit = avail / 4 * 3
	}
	return percent, limit
}

// applyRouterGC sets routerGC's values and says so in the log.
func applyRouterGC(log *slog.Logger) {
	percent, limit := routerGC(os.Getenv, availableMemory(os.ReadFile))
	if percent >= 0 {
		debug.SetGCPercent(percent)
	}
	if limit > 0 {
		debug.SetMemoryLimit(limit)
	}
	gogc, mib := "from the environment", "from the environment"
	if percent >= 0 {
		gogc = strconv.Itoa(percent)
	}
	if limit > 0 {
		mib = strconv.FormatInt(limit>>20, 10)
	} else if os.Getenv("GOMEMLIMIT") == "" {
		mib = "none (the process's memory is unknown)"
	}
	log.Info("collector: the router's defaults (GOGC and GOMEMLIMIT in the environment override them)", "gogc", gogc, "memory_limit_mib", mib)
}

// availableMemory is the memory the process may use, in bytes: its cgroup's
// limit (v2 memory.max, v1 memory.limit_in_bytes) where one is set, else
// the machine's (MemTotal); 0 when none can be read.
func availableMemory(read func(string) ([]byte, error)) int64 {
	var m int64
	lower := func(v int64) {
		if v > 0 && (m == 0 || v < m) {
			m = v
		}
	}
	if data, err := read("/proc/meminfo"); err == nil {
		for line := range bytes.Lines(data) {
			if rest, ok := bytes.CutPrefix(line, []byte("MemTotal:")); ok {
				f := bytes.Fields(rest)
				if len(f) == 2 && string(f[1]) == "kB" {
					if kb, err := strconv.ParseInt(string(f[0]), 10, 64); err == nil {
						lower(kb << 10)
					}
				}
			}
		}
	}
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if data, err := read(p); err == nil {
			// "max" (v2) or a huge number (v1) when unlimited: above MemTotal.
			if v, err := strconv.ParseInt(string(bytes.TrimSpace(data)), 10, 64); err == nil {
				lower(v)
			}
		}
	}
	return m
}
