package kernel

// Weights is the storage of one weight matrix that decode streams from
// memory every step. Where the operating system allows (Linux with
// transparent huge pages not `never`) a matrix of 2 MiB or more lives in an
// anonymous mapping aligned to 2 MiB and advised MADV_HUGEPAGE before it is
// first written, so that the kernel backs it with 2 MiB pages: the Go heap
// gets 4 KiB pages here, and decode then reads the same weights 1.4–1.5x
// (eight rows) to 1.9x (one row) faster per CPU-second, the TLB the likely
// cause (docs/results-structure.md, "Weights on huge pages"). Elsewhere,
// under `never`, for smaller matrices, or when the mapping fails, Floats is
// an ordinary Go slice: the same numbers on small pages.
//
// Lifetime: a mapping is not the garbage collector's, so it lives until
// Free or the process's end. Weights are loaded once and kept for the
// model's life, which is the process's (a model is never unloaded), so
// the loaders never call Free (a load that fails part-way leaves its
// mappings behind: the caller then reports the error); a benchmark or test
// that makes its own buffers does.
type Weights struct {
	Floats []float32 // n zeroed values
	mapped []byte    // the whole mapping (Floats' memory rounded up to pages); nil on the Go heap
}

// hugePage is the size of a transparent huge page (x86-64 and arm64 with
// 4 KiB base pages): the alignment and the smallest matrix worth mapping.
const hugePage = 2 << 20

// AllocWeights returns n zeroed float32 values for a weight matrix, on 2
// MiB pages where the system allows (see Weights).
func AllocWeights(n int) *Weights { return allocWeights(n, thpSetting) }

// allocWeights is AllocWeights with the kernel's setting read from setting.
func allocWeights(n int, setting string) *Weights {
	if n*4 >= hugePage && thpAllowed(setting) {
		if w, err := mapHuge(n); err == nil {
			return w
		}
	}
	return &Weights{Floats: make([]float32, n)}
}

// Huge says whether the values live in a mapping advised for huge pages
// (whether the kernel found 2 MiB pages for it is the kernel's business:
// /proc/self/smaps shows it as AnonHugePages).
func (w *Weights) Huge() bool { return w.mapped != nil }

// Free returns a mapping to the system; Floats must not be used after it.
// On the Go heap it only drops the reference. Free twice is a no-op.
func (w *Weights) Free() {
	if w.mapped != nil {
		unmap(w.mapped)
	}
	w.Floats, w.mapped = nil, nil
}
