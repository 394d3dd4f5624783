package safetensors

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestHalfKnownValues(t *testing.T) {
	cases := map[uint16]float32{
		0x3c00: 1, 0xc000: -2, 0x7bff: 65504, 0x0001: 1.0 / (1 << 24),
		0x0400: 1.0 / (1 << 14), 0x3555: 0.333251953125, 0x0000: 0,
	}
	for h, want := range cases {
		if got := HalfToFloat32(h); got != want {
			t.Errorf("HalfToFloat32(%#04x) = %g, want %g", h, got, want)
		}
	}
	if !math.IsInf(float64(HalfToFloat32(0x7c00)), 1) || !math.IsNaN(float64(HalfToFloat32(0x7e00))) {
		t.Error("infinity or NaN lost")
	}
	if got := Float32ToHalf(70000); got != 0x7c00 {
		t.Errorf("overflow: %#04x, want +inf", got)
	}
	if got := Float32ToHalf(1 + 1.0/2048); got != 0x3c00 { // tie: round to even
		t.Errorf("tie rounding: %#04x, want 0x3c00", got)
	}
}

func TestHalfRoundTripsEveryValue(t *testing.T) {
	for h := range 1 << 16 {
		f := HalfToFloat32(uint16(h))
		if math.IsNaN(float64(f)) {
			continue
		}
		if back := Float32ToHalf(f); back != uint16(h) {
			t.Fatalf("%#04x -> %g -> %#04x", h, f, back)
		}
	}
}

func TestBF16(t *testing.T) {
	if got := Float32ToBF16(1); got != 0x3f80 {
		t.Fatalf("bf16(1) = %#04x", got)
	}
	v := []float32{1, -2.5, 3.140625, 1e-3, 65504}
	raw, _ := FromFloat32(BF16, v)
	out := make([]float32, len(v))
	if err := ToFloat32(BF16, raw, out); err != nil {
		t.Fatal(err)
	}
	for i := range v {
		if math.Abs(float64(out[i]-v[i])) > math.Abs(float64(v[i]))/128 {
			t.Fatalf("bf16 round trip of %g gave %g", v[i], out[i])
		}
	}
}

func sample(t *testing.T) []Tensor {
	t.Helper()
	var ts []Tensor
	for _, c := range []struct {
		name  string
		dt    DType
		shape []int
	}{{"a.weight", F32, []int{3, 4}}, {"b.bias", F16, []int{5}}, {"c", BF16, []int{2, 2, 2}}, {"scalar", F32, nil}} {
		n := 1
		for _, s := range c.shape {
			n *= s
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(i) - 1.5
		}
		tn, err := FromF32(c.name, c.dt, c.shape, v)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, tn)
	}
	return ts
}

func checkArchive(t *testing.T, a *Archive) {
	t.Helper()
	if got := a.Names(); !slices.Equal(got, []string{"a.weight", "b.bias", "c", "scalar"}) {
		t.Fatalf("names %v", got)
	}
	for _, name := range a.Names() {
		v, shape, err := a.Float32(name)
		if err != nil {
			t.Fatal(err)
		}
		n := 1
		for _, s := range shape {
			n *= s
		}
		if len(v) != n {
			t.Fatalf("%s: %d values for shape %v", name, len(v), shape)
		}
		for i := range v {
			if v[i] != float32(i)-1.5 {
				t.Fatalf("%s[%d] = %g", name, i, v[i])
			}
		}
	}
	if _, _, err := a.Float32("nope"); !errors.Is(err, ErrNoTensor) {
		t.Fatalf("missing tensor: %v", err)
	}
}

func TestRoundTripSingleAndSharded(t *testing.T) {
	dir := t.TempDir()
	if err := WriteFile(filepath.Join(dir, SingleName), sample(t), map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	a, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	checkArchive(t, a)
	if md := a.files[0].Metadata(); md["format"] != "pt" {
		t.Fatalf("metadata %v", md)
	}
	a.Close()

	sh := t.TempDir()
	if err := WriteSharded(sh, sample(t), 3); err != nil {
		t.Fatal(err)
	}
	a, err = Open(sh)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if len(a.Files()) != 3 {
		t.Fatalf("%d shard files", len(a.Files()))
	}
	checkArchive(t, a)
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.safetensors")
	if err := WriteFile(good, sample(t), nil); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(good)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	hdrLen := binary.LittleEndian.Uint64(data)
	badOffsets := slices.Clone(data)
	hdr := string(badOffsets[8 : 8+hdrLen])
	hdr = strings.Replace(hdr, `"data_offsets":[0,`, `"data_offsets":[4,`, 1)
	copy(badOffsets[8:], hdr)

	cases := []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(dir, "none.safetensors"), "no such file"},
		{"empty dir", t.TempDir(), "has no model.safetensors.index.json"},
		{"tiny", write("tiny.safetensors", []byte{1, 2}), "truncated"},
		{"header cut", write("cut1.safetensors", data[:20]), "truncated"},
		{"data cut", write("cut2.safetensors", data[:len(data)-3]), "truncated"},
		{"huge header", write("huge.safetensors", append([]byte{0, 0, 0, 0, 0, 0, 0, 1}, data[8:]...)), "bad header"},
		{"not json", write("nojson.safetensors", append(slices.Clone(data[:8]), []byte(strings.Repeat("x", int(hdrLen)))...)), "bad header"},
		{"offsets", write("off.safetensors", badOffsets), "needs"},
		{"index missing shard", write("model.safetensors.index.json", []byte(`{"weight_map":{"a.weight":"model-00001-of-00002.safetensors"}}`)), "no such file"},
		{"index wrong shard", write("idx2.json", []byte(`{"weight_map":{"zzz":"good.safetensors"}}`)), "does not hold it"},
	}
	for _, c := range cases {
		_, err := Open(c.path)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to mention %q", c.name, err, c.want)
		}
	}
	if _, err := Open(filepath.Join(dir, "none.safetensors")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file error does not wrap fs.ErrNotExist: %v", err)
	}
}

// FuzzParse: no input makes the parser panic, and what it accepts reads
// back within bounds.
func FuzzParse(f *testing.F) {
	var buf strings.Builder
	ts := []Tensor{{Name: "a", DType: F16, Shape: []int{2, 3}, Data: make([]byte, 12)}, {Name: "b", DType: BF16, Shape: []int{1}, Data: make([]byte, 2)}}
	if err := Write(&buf, ts, map[string]string{"k": "v"}); err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(buf.String()))
	f.Add([]byte{8, 0, 0, 0, 0, 0, 0, 0, '{', '}', ' ', ' ', ' ', ' ', ' ', ' '})
	f.Add([]byte(`garbage`))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := parse("fuzz", data)
		if err != nil {
			return
		}
		for _, name := range file.Names() {
			info, _ := file.Info(name)
			if info.DType.Float() {
				if _, _, err := file.Float32(name); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			} else if _, _, err := file.Raw(name); err != nil {
				t.Fatal(err)
			}
		}
	})
}
