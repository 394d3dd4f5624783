package gguf

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func sample(t testing.TB) (string, []KV, []Tensor) {
	meta := []KV{
		{"general.architecture", "llama"}, {"general.alignment", uint32(64)}, {"u8", uint8(7)}, {"b", true},
		{"i32", int32(-5)}, {"u64", uint64(1) << 40}, {"f32", float32(0.5)},
		{"strings", []string{"a", "", "ü"}}, {"ints", []int32{1, -2, 3}}, {"floats", []float32{1.5, -2}},
	}
	tensors := []Tensor{
		{Name: "w", Dims: []uint64{32, 2}, Type: Q8_0, Data: make([]byte, 68)},
		{Name: "v", Dims: []uint64{3}, Type: F32, Data: []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
		{Name: "h", Dims: []uint64{2}, Type: F16, Data: []byte{0, 0x3c, 0, 0xc0}},
	}
	tensors[0].Data[5] = 9
	path := filepath.Join(t.TempDir(), "s.gguf")
	// general.alignment 64 is read back; the writer aligns to 32, which a
	// reader told 64 must reject, so write without it first.
	if err := Write(path, meta[:1], tensors); err != nil {
		t.Fatal(err)
	}
	return path, meta, tensors
}

func TestRoundTrip(t *testing.T) {
	_, meta, tensors := sample(t)
	meta = append(meta[:1], meta[2:]...)
	path := filepath.Join(t.TempDir(), "r.gguf")
	if err := Write(path, meta, tensors); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.Metadata, meta) {
		t.Fatalf("metadata %v, want %v", f.Metadata, meta)
	}
	for i, want := range tensors {
		got := f.Tensors[i]
		if got.Name != want.Name || got.Type != want.Type || !reflect.DeepEqual(got.Dims, want.Dims) || string(got.Data) != string(want.Data) || got.Offset%32 != 0 {
			t.Fatalf("tensor %d: %+v, want %+v", i, got, want)
		}
	}
	if v, ok := f.Uint("u64"); !ok || v != 1<<40 {
		t.Fatalf("Uint: %d %v", v, ok)
	}
	if f.String("general.architecture") != "llama" {
		t.Fatal("String")
	}
}

// TestBadFiles: every truncation, an unknown tensor type and a file that is
// not GGUF are one-line errors naming the file and what is wrong.
func TestBadFiles(t *testing.T) {
	path, _, _ := sample(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	g, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	last := g.Tensors[len(g.Tensors)-1].Data
	end := len(data) - cap(last) + len(last) // the padding after it is not needed
	for n := range end {
		_, err := Parse(data[:n])
		if err == nil {
			t.Fatalf("a file cut to %d of %d bytes parsed", n, len(data))
		}
		if msg := err.Error(); !strings.Contains(msg, "truncated") && !strings.Contains(msg, "not a GGUF") {
			t.Fatalf("cut to %d bytes: %v", n, err)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.gguf")
	os.WriteFile(bad, data[:end-1], 0o644)
	if _, err := Open(bad); err == nil || !strings.Contains(err.Error(), bad) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("truncated file: %v", err)
	}
	// The first tensor's type field, patched to 99.
	i := strings.Index(string(data), "w\x02\x00\x00\x00") + 1 + 4 + 16
	patched := append([]byte(nil), data...)
	patched[i] = 99
	if _, err := Parse(patched); err == nil || !strings.Contains(err.Error(), "tensor w: unknown tensor type 99") {
		t.Fatalf("unknown type: %v", err)
	}
	if _, err := Parse([]byte("GGML....")); err == nil || !strings.Contains(err.Error(), "not a GGUF") {
		t.Fatalf("not GGUF: %v", err)
	}
}

// FuzzParse: no input makes Parse panic or hand out data past the file.
func FuzzParse(f *testing.F) {
	path, _, _ := sample(f)
	data, _ := os.ReadFile(path)
	f.Add(data)
	f.Add([]byte("GGUF\x03\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := Parse(b)
		if err != nil {
			return
		}
		for _, tn := range g.Tensors {
			if n, _ := tn.Type.Size(tn.Elements()); len(tn.Data) != n {
				t.Fatalf("tensor %s: %d bytes for %d", tn.Name, len(tn.Data), n)
			}
		}
	})
}
