//go:build unix

package safetensors

import (
	"fmt"
	"os"
	"syscall"
)

// mapFile maps path read-only; an empty file is read instead.
func mapFile(path string) ([]byte, func() error, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if st.IsDir() {
		return nil, nil, fmt.Errorf("%s is a directory", path)
	}
	size := st.Size()
	if size == 0 || size != int64(int(size)) {
		return readFile(path)
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return readFile(path)
	}
	return b, func() error { return syscall.Munmap(b) }, nil
}
