package kernel

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"
)

// hugeBytes is how much of the mapping that holds x the kernel backs with
// huge pages (AnonHugePages in /proc/self/smaps); 0 if it cannot tell.
func hugeBytes(x []float32) int64 {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0
	}
	defer f.Close()
	addr := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(x))))
	in := false
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := sc.Text()
		var lo, hi uint64
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 {
			in = lo <= addr && addr < hi
			continue
		}
		if rest, ok := strings.CutPrefix(line, "AnonHugePages:"); ok && in {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
