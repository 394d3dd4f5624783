package safetensors

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"unsafe"
)

// maxHeader bounds the JSON header (the reference implementation's limit).
const maxHeader = 100 << 20

// Info describes one tensor of a file.
type Info struct {
	Name  string
	DType DType
	Shape []int
	// Begin and End are byte offsets into the data section.
	Begin, End int64
}

// Elements is the number of elements (the product of the shape; 1 for a
// scalar).
func (t Info) Elements() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// File is one safetensors file, memory-mapped where the platform allows
// (read into memory otherwise). Its methods are safe for concurrent use;
// Close must not run concurrently with them.
type File struct {
	path     string
	data     []byte // the data section
	unmap    func() error
	infos    map[string]Info
	metadata map[string]string
}

type headerEntry struct {
	DType       DType   `json:"dtype"`
	Shape       []int   `json:"shape"`
	DataOffsets []int64 `json:"data_offsets"`
}

// OpenFile opens and validates one safetensors file.
func OpenFile(path string) (*File, error) {
	raw, unmap, err := mapFile(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	f, err := parse(path, raw)
	if err != nil {
		_ = unmap()
		return nil, err
	}
	f.unmap = unmap
	return f, nil
}

// parse validates the header against the whole file in raw.
func parse(path string, raw []byte) (*File, error) {
	if len(raw) < 8 {
		return nil, fmt.Errorf("safetensors: %s is truncated: %d bytes, too short for the 8-byte header length", path, len(raw))
	}
	n := binary.LittleEndian.Uint64(raw)
	if n > maxHeader {
		return nil, fmt.Errorf("safetensors: %s: bad header: length %d exceeds %d bytes (not a safetensors file?)", path, n, maxHeader)
	}
	if uint64(len(raw)-8) < n {
		return nil, fmt.Errorf("safetensors: %s is truncated: header of %d bytes, file has %d bytes after the length", path, n, len(raw)-8)
	}
	var hdr map[string]json.RawMessage
	if err := json.Unmarshal(raw[8:8+n], &hdr); err != nil {
		return nil, fmt.Errorf("safetensors: %s: bad header: %w", path, err)
	}
	f := &File{path: path, data: raw[8+n:], infos: make(map[string]Info, len(hdr))}
	var need int64
	for name, msg := range hdr {
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &f.metadata); err != nil {
				return nil, fmt.Errorf("safetensors: %s: bad header: __metadata__ must map strings to strings: %w", path, err)
			}
			continue
		}
		var e headerEntry
		if err := json.Unmarshal(msg, &e); err != nil {
			return nil, fmt.Errorf("safetensors: %s: bad header entry for tensor %q: %w", path, name, err)
		}
		if e.DType.Size() == 0 {
			return nil, fmt.Errorf("safetensors: %s: tensor %q has unknown dtype %q", path, name, e.DType)
		}
		if len(e.DataOffsets) != 2 || e.DataOffsets[0] < 0 || e.DataOffsets[1] < e.DataOffsets[0] {
			return nil, fmt.Errorf("safetensors: %s: tensor %q has bad data_offsets %v", path, name, e.DataOffsets)
		}
		info := Info{Name: name, DType: e.DType, Shape: e.Shape, Begin: e.DataOffsets[0], End: e.DataOffsets[1]}
		elems := int64(1)
		for _, d := range e.Shape {
			if d < 0 || (d > 0 && elems > (1<<62)/int64(d)) {
				return nil, fmt.Errorf("safetensors: %s: tensor %q has bad shape %v", path, name, e.Shape)
			}
			elems *= int64(d)
		}
		if want := elems * int64(e.DType.Size()); info.End-info.Begin != want {
			return nil, fmt.Errorf("safetensors: %s: tensor %q: shape %v of %s needs %d bytes, data_offsets %v span %d", path, name, e.Shape, e.DType, want, e.DataOffsets, info.End-info.Begin)
		}
		need = max(need, info.End)
		f.infos[name] = info
	}
	if int64(len(f.data)) < need {
		return nil, fmt.Errorf("safetensors: %s is truncated: tensors need %d data bytes, the file has %d", path, need, len(f.data))
	}
	return f, nil
}

// Path is the file's path.
func (f *File) Path() string { return f.path }

// Metadata is the header's __metadata__ map (nil when absent).
func (f *File) Metadata() map[string]string { return f.metadata }

// Names lists the tensors, sorted.
func (f *File) Names() []string {
	names := make([]string, 0, len(f.infos))
	for n := range f.infos {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Info describes a tensor.
func (f *File) Info(name string) (Info, bool) {
	i, ok := f.infos[name]
	return i, ok
}

// Raw returns a tensor's bytes, aliasing the file's memory: valid until Close,
// and not to be written.
func (f *File) Raw(name string) ([]byte, Info, error) {
	i, ok := f.infos[name]
	if !ok {
		return nil, Info{}, fmt.Errorf("safetensors: %s has no tensor %q", f.path, name)
	}
	return f.data[i.Begin:i.End:i.End], i, nil
}

// Float32 returns a tensor converted to a new float32 slice, with its shape.
func (f *File) Float32(name string) ([]float32, []int, error) {
	raw, info, err := f.Raw(name)
	if err != nil {
		return nil, nil, err
	}
	out := make([]float32, info.Elements())
	if info.DType == F32 && nativeLittleEndian {
		if len(out) > 0 { // copy bytes: raw may be unaligned for float32
			copy(unsafe.Slice((*byte)(unsafe.Pointer(&out[0])), len(raw)), raw)
		}
		return out, info.Shape, nil
	}
	if err := ToFloat32(info.DType, raw, out); err != nil {
		return nil, nil, fmt.Errorf("%s: tensor %q: %w", f.path, name, err)
	}
	return out, info.Shape, nil
}

// Close releases the file's memory.
func (f *File) Close() error {
	if f.unmap == nil {
		return nil
	}
	err := f.unmap()
	f.unmap, f.data = nil, nil
	return err
}

var nativeLittleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// readFile is the portable fallback of mapFile.
func readFile(path string) ([]byte, func() error, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return b, func() error { return nil }, nil
}
