package planner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// AppSpec is an application file (examples/apps/*.json): the models, what
// each must answer and where its inputs come from.
type AppSpec struct {
	Name   string      `json:"name"`
	Seed   uint64      `json:"seed"`
	Notes  []string    `json:"notes,omitempty"`
	Models []ModelSpec `json:"models"`
}

// ModelSpec is one node of the application graph.
type ModelSpec struct {
	Name string `json:"name"`
	// Profile is an engine/sim profile: a built-in name or a .json path
	// (relative to the application file). It prices the model on
	// ProfileTP GPUs; other TP degrees are derived (DeriveTP).
	Profile      string  `json:"profile"`
	ProfileTP    int     `json:"profile_tp,omitempty"` // default 1
	WeightsBytes float64 `json:"weights_bytes"`
	LoadS        float64 `json:"load_s"`           // load time of the model at ProfileTP, seconds
	TP           []int   `json:"tp,omitempty"`     // allowed tensor-parallel degrees (default: ProfileTP only)
	MaxDP        int     `json:"max_dp,omitempty"` // cap on data-parallel replicas (0: none)
	// Requests is how many requests the model answers; a model with
	// inputs answers one per input request unless set.
	Requests int `json:"requests"`
	// PromptLengths and OutputLengths are files of samples (a JSON array of
	// token counts, relative to the application file): the eCDFs the
	// requests' prompt and output lengths are drawn from.
	PromptLengths string `json:"prompt_lengths"`
	OutputLengths string `json:"output_lengths"`
	MaxOutput     int    `json:"max_output"` // output limit (0: none)
	// Inputs are data dependencies: request i of this model takes the
	// output of request ⌊Skip·n⌋+i of model From, n its request count
	// (concatenated to its prompt); with Requests unset, the model
	// answers Share·n requests of its first input (routing). An input from the model itself is a self-loop: the request
	// runs Rounds times, each round's prompt a new chunk plus the previous
	// round's output (chain summary).
	Inputs []InputSpec `json:"inputs,omitempty"`
	// RoundsLengths is the file of samples of the rounds per request of a
	// self-loop (chunks per document).
	RoundsLengths string `json:"rounds_lengths,omitempty"`
	// CPUModel is the built-in dummy-weight shape (models/llama) that plays
	// this model in `pitstop plan --run`.
	CPUModel string `json:"cpu_model,omitempty"`
}

// InputSpec is one incoming edge.
type InputSpec struct {
	From  string  `json:"from"`
	Share float64 `json:"share,omitempty"` // fraction of From's requests routed here (0: all)
	Skip  float64 `json:"skip,omitempty"`  // fraction of From's requests before this model's first
}

// ReadApp reads an application file; unknown fields are errors.
func ReadApp(path string) (*AppSpec, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	a, err := ParseApp(data)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	return a, filepath.Dir(path), nil
}

// ParseApp decodes an application file's contents.
func ParseApp(data []byte) (*AppSpec, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var a AppSpec
	if err := dec.Decode(&a); err != nil {
		return nil, err
	}
	if len(a.Models) == 0 {
		return nil, fmt.Errorf("no models")
	}
	return &a, nil
}

// readSamples reads a JSON array of token counts.
func readSamples(dir, name string) ([]int, error) {
	if name == "" {
		return nil, fmt.Errorf("no samples file given")
	}
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var s []int
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return s, nil
}
