package workload

import (
	"bytes"
	"compress/gzip"
	"embed"
	"fmt"
	"io"
)

// The embedded data is made offline from ../shared/data by the converter (see NOTICE at the
// repository root for sources and licences). The runtime never reads ../shared.
//
//go:generate go run ./internal/convert -shared ../../../shared/data -data data
//go:embed data/*.gz
var dataFS embed.FS

// readData returns an embedded file, decompressed.
func readData(name string) ([]byte, error) {
	f, err := dataFS.Open("data/" + name)
	if err != nil {
		return nil, fmt.Errorf("embedded data %s: %w", name, err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("embedded data %s: %w", name, err)
	}
	var b bytes.Buffer
	if _, err := io.Copy(&b, zr); err != nil {
		return nil, fmt.Errorf("embedded data %s: %w", name, err)
	}
	return b.Bytes(), nil
}

// InferceptRaw returns the original, text-bearing InferCept trace: the multi-API set
// (merged_exp_uniform.json) when multi is true, else the single-API set
// (diverse_oneapi_merged_exp_uniform.json), byte for byte as published.
func InferceptRaw(multi bool) ([]byte, error) {
	if multi {
		return readData("infercept_multi.json.gz")
	}
	return readData("infercept_single.json.gz")
}
