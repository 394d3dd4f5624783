package kernel

import (
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"unsafe"
)

// TestAllocWeights checks both homes of a weight matrix: a large one in a
// 2 MiB-aligned mapping where the system allows huge pages, a small one on
// the heap; each zeroed, of the length asked, and writable to its end
// (from two goroutines, as the loaders fill matrices in parallel).
func TestAllocWeights(t *testing.T) {
	huge := runtime.GOOS == "linux" && thpAllowed(thpSetting)
	for _, c := range []struct {
		n      int
		mapped bool
	}{
		{1, false},
		{hugePage/4 - 1, false},
		{hugePage / 4, huge},
		{3*hugePage/4 + 1001, huge}, // a tail past the last huge page
	} {
		w := AllocWeights(c.n)
		if len(w.Floats) != c.n || w.Huge() != c.mapped {
			t.Fatalf("n = %d: length %d, huge %v; want %d, %v", c.n, len(w.Floats), w.Huge(), c.n, c.mapped)
		}
		if addr := uintptr(unsafe.Pointer(&w.Floats[0])); w.Huge() && addr%hugePage != 0 {
			t.Fatalf("n = %d: mapped at %#x, not on a 2 MiB boundary", c.n, addr)
		}
		for i, v := range w.Floats {
			if v != 0 {
				t.Fatalf("n = %d: Floats[%d] = %v, want 0", c.n, i, v)
			}
		}
		var wg sync.WaitGroup
		for g := range 2 {
			wg.Go(func() {
				for i := g; i < c.n; i += 2 {
					w.Floats[i] = float32(i)
				}
			})
		}
		wg.Wait()
		if last := w.Floats[c.n-1]; last != float32(c.n-1) {
			t.Fatalf("n = %d: last value %v after the fill, want %v", c.n, last, float32(c.n-1))
		}
		w.Free()
		w.Free()
		if w.Floats != nil || w.Huge() {
			t.Fatalf("n = %d: Free left %d values, huge %v", c.n, len(w.Floats), w.Huge())
		}
	}
}

// TestTHPAllowed reads the kernel's setting as Linux writes it: the chosen
// mode in brackets; `never`, or no file, means the heap.
func TestTHPAllowed(t *testing.T) {
	dir := t.TempDir()
	for setting, want := range map[string]bool{
		"always [madvise] never\n": true,
		"[always] madvise never\n": true,
		"always madvise [never]\n": false,
		"":                         false,
	} {
		path := filepath.Join(dir, "enabled")
		if err := os.WriteFile(path, []byte(setting), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := thpAllowed(path); got != want && runtime.GOOS == "linux" {
			t.Errorf("setting %q: allowed %v, want %v", setting, got, want)
		}
	}
	if thpAllowed(filepath.Join(dir, "missing")) {
		t.Error("a missing setting allows huge pages, want the heap")
	}
}

// TestAllocWeightsFallback: under `never` a large matrix goes on the heap,
// zeroed; and where the mapping cannot be made (here: a length no address
// space holds), mapHuge reports an error, on which AllocWeights uses the
// heap too.
func TestAllocWeightsFallback(t *testing.T) {
	never := filepath.Join(t.TempDir(), "enabled")
	if err := os.WriteFile(never, []byte("always madvise [never]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := allocWeights(hugePage, never)
	if w.Huge() || len(w.Floats) != hugePage || w.Floats[hugePage-1] != 0 {
		t.Fatalf("under never: huge %v, length %d, last %v; want the heap, %d zeros", w.Huge(), len(w.Floats), w.Floats[hugePage-1], hugePage)
	}
	w.Free()
	if runtime.GOOS != "linux" {
		return
	}
	if w, err := mapHuge(1 << 60); err == nil {
		w.Free()
		t.Fatal("mapHuge of 4 EiB succeeded, want an error")
	}
}
