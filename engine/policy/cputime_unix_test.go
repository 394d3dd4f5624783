//go:build unix

package policy

import "syscall"

// processCPU is the process's user and system CPU time so far in ns (false
// where the system will not say): the ordering benchmark reports it per op
// beside the wall time, which other jobs on a shared machine inflate.
func processCPU() (int64, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return ru.Utime.Nano() + ru.Stime.Nano(), true
}
