package kernel

import (
	"errors"
	"os"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// thpSetting is where Linux says whether anonymous memory may get
// transparent huge pages: "always", "madvise" (only where advised, this
// machine's setting) or "never", the chosen one in brackets.
const thpSetting = "/sys/kernel/mm/transparent_hugepage/enabled"

// thpAllowed says whether the setting at path lets an advised mapping get
// huge pages: not under `never`, nor where the file is missing (a kernel
// built without them).
func thpAllowed(path string) bool {
	b, err := os.ReadFile(path)
	return err == nil && strings.Contains(string(b), "[") && !strings.Contains(string(b), "[never]")
}

// mapHuge maps n float32 values at a 2 MiB boundary, advised MADV_HUGEPAGE
// before anything touches them (a page faulted in small stays small until
// khugepaged, if ever, merges it). The length is rounded up to base pages
// only: the tail under 2 MiB stays on small pages rather than fault in a
// mostly unused huge one.
func mapHuge(n int) (*Weights, error) {
	page := os.Getpagesize()
	size := (n*4 + page - 1) / page * page
	p, err := unix.MmapPtr(-1, 0, nil, uintptr(size+hugePage), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, err
	}
	// Keep the 2 MiB-aligned part; give back what lies before and after it.
	head := (hugePage - int(uintptr(p)%hugePage)) % hugePage
	if head > 0 {
		if err := unix.MunmapPtr(p, uintptr(head)); err != nil {
			unix.MunmapPtr(p, uintptr(size+hugePage))
			return nil, err
		}
	}
	body := unsafe.Add(p, head)
	if tail := hugePage - head; tail > 0 {
		if err := unix.MunmapPtr(unsafe.Add(body, size), uintptr(tail)); err != nil {
			unix.MunmapPtr(body, uintptr(size+tail))
			return nil, err
		}
	}
	mem := unsafe.Slice((*byte)(body), size)
	if err := unix.Madvise(mem, unix.MADV_HUGEPAGE); err != nil {
		unmap(mem)
		return nil, errors.Join(errors.New("madvise(MADV_HUGEPAGE)"), err)
	}
	return &Weights{Floats: unsafe.Slice((*float32)(body), n), mapped: mem}, nil
}

// unmap returns a mapping made by mapHuge.
func unmap(mem []byte) { unix.MunmapPtr(unsafe.Pointer(unsafe.SliceData(mem)), uintptr(len(mem))) }
