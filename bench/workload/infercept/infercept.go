// Package infercept reads the InferCept trace format (the multi-API and single-API sets of
// InferCept and LAMPS) with its request order kept, and names the tool behind each segment.
// It is shared by the workload package, by the offline token-count converter, and by the
// predictor's training data: TraceRecords turns a trace into predictor.TraceRecords (here, so
// that predictor depends on no workload).
//
// The format is one JSON object mapping a request id to a list of segments:
//
//	{"<id>": [{"prompt_tokens": 392, "completion_tokens": 127, "api_time": 8.6e-05, "api_token_length": 21},
//	          ...,
//	          {"prompt_tokens": 785, "completion_tokens": 76}]}
//
// Conversation requests may carry text instead of counts ("prompt", "completion",
// "api_token"). This package adds one optional field, "tool", the name of the tool that ends
// the segment; the converted files embedded by the workload package carry it.
package infercept

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Segment is one segment as written in the trace. Pointer fields are nil when absent.
type Segment struct {
	PromptTokens     *int     `json:"prompt_tokens"`
	CompletionTokens *int     `json:"completion_tokens"`
	APITime          *float64 `json:"api_time"`
	APITokenLength   *int     `json:"api_token_length"`
	Prompt           *string  `json:"prompt"`
	Completion       *string  `json:"completion"`
	APIToken         *string  `json:"api_token"`
	Tool             string   `json:"tool,omitempty"`
}

// HasText reports whether the segment carries any text field.
func (s *Segment) HasText() bool { return s.Prompt != nil || s.Completion != nil || s.APIToken != nil }

// Request is one request (agent program) of the trace.
type Request struct {
	Key      string
	Segments []Segment
}

// Parse reads a whole trace, keeping the order of the requests as written. It checks syntax
// and field types only; the meaning of the numbers is checked by the caller. Errors name the
// request and segment (and the byte offset where the decoder stopped).
func Parse(data []byte) ([]Request, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty input: expected a JSON object mapping request ids to segment lists")
		}
		return nil, fmt.Errorf("at byte %d: %v", dec.InputOffset(), err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("at byte %d: expected a JSON object mapping request ids to segment lists, found %s", dec.InputOffset(), describe(tok))
	}
	var reqs []Request
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("at byte %d: reading a request id: %v", dec.InputOffset(), err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("at byte %d: expected a request id, found %s", dec.InputOffset(), describe(tok))
		}
		if seen[key] {
			return nil, fmt.Errorf("request %q (byte %d): duplicate request id", key, dec.InputOffset())
		}
		seen[key] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("request %q (byte %d): %v", key, dec.InputOffset(), err)
		}
		segs, err := parseSegments(raw)
		if err != nil {
			return nil, fmt.Errorf("request %q: %w", key, err)
		}
		reqs = append(reqs, Request{Key: key, Segments: segs})
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, fmt.Errorf("at byte %d: %v", dec.InputOffset(), err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("at byte %d: unexpected data after the closing brace of the trace", dec.InputOffset())
	}
	if len(reqs) == 0 {
		return nil, errors.New("the trace has no requests")
	}
	return reqs, nil
}

func parseSegments(raw json.RawMessage) ([]Segment, error) {
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil || elems == nil {
		return nil, fmt.Errorf("expected an array of segments, found %s", firstChars(raw))
	}
	if len(elems) == 0 {
		return nil, errors.New("empty segment list")
	}
	segs := make([]Segment, len(elems))
	for i, e := range elems {
		t := bytes.TrimSpace(e)
		if len(t) == 0 || t[0] != '{' {
			return nil, fmt.Errorf("segment %d: expected an object, found %s", i, firstChars(e))
		}
		if err := json.Unmarshal(e, &segs[i]); err != nil {
			var ute *json.UnmarshalTypeError
			if errors.As(err, &ute) {
				return nil, fmt.Errorf("segment %d: field %q: cannot use JSON %s as %s", i, ute.Field, ute.Value, ute.Type)
			}
			return nil, fmt.Errorf("segment %d: %v", i, err)
		}
	}
	return segs, nil
}

func describe(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		return fmt.Sprintf("%q", string(v))
	case string:
		return fmt.Sprintf("string %q", firstChars([]byte(v)))
	case nil:
		return "null"
	default:
		return fmt.Sprintf("%v", v)
	}
}

func firstChars(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	if s == "" {
		return "nothing"
	}
	return s
}

// Family is the kind of request a trace key names in the InferCept sets.
type Family int

const (
	// FamilyOther is any key outside the InferCept naming (a user's own trace).
	FamilyOther Family = iota
	// FamilyHex: 32-hex keys, math and QA requests (calculator and Wikipedia tools).
	FamilyHex
	// FamilyConvAPI: "N_M" keys, ShareGPT conversations with text-to-speech or image
	// generation calls; their count-only requests are ALFWorld-like virtual-environment runs.
	FamilyConvAPI
	// FamilyConv: "N" keys, ShareGPT conversations whose pauses are human think time;
	// their count-only requests are virtual-environment runs as in FamilyConvAPI.
	FamilyConv
)

// String is the family's name in the InferCept data README: hex, N_M, N, or other.
func (f Family) String() string {
	switch f {
	case FamilyHex:
		return "hex"
	case FamilyConvAPI:
		return "N_M"
	case FamilyConv:
		return "N"
	}
	return "other"
}

// FamilyOf classifies a trace key.
func FamilyOf(key string) Family {
	switch {
	case len(key) == 32 && strings.Trim(key, "0123456789abcdef") == "":
		return FamilyHex
	case isDigits(key):
		return FamilyConv
	default:
		if a, b, ok := strings.Cut(key, "_"); ok && isDigits(a) && isDigits(b) {
			return FamilyConvAPI
		}
	}
	return FamilyOther
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// Tool names given to the segments of the InferCept sets (see ToolName).
const (
	ToolMath       = "math"        // calculator: api_time ~1e-4 s, ~20-token results
	ToolQA         = "qa"          // Wikipedia lookup: api_time 0.3-1 s, ~55-token results
	ToolTTS        = "tts"         // "Convert this to text to speech."
	ToolImage      = "image-gen"   // "Generate an image about this."
	ToolHuman      = "human-think" // the user's next turn; api_time is think time (capped at 60 s)
	ToolVirtualEnv = "virtual-env" // count-only conversation-key requests: ~2,000-token prompt, 4-token actions, ~0.1 s steps
	ToolGeneric    = "tool"        // keys outside the InferCept naming
)

// mathQASplit separates the two modes of the hex family's api_time: about 1e-4 s
// (calculator) and 0.3-1 s (Wikipedia lookup); nothing in the data lies between 2e-4 and 0.27 s.
const mathQASplit = 0.01

// ToolName names the tool that ends segment s of a request with the given key. An explicit
// "tool" field wins; otherwise the key's family, the api_time and the api_token text decide.
func ToolName(key string, s *Segment) string {
	if s.Tool != "" {
		return s.Tool
	}
	switch FamilyOf(key) {
	case FamilyHex:
		if s.APITime != nil && *s.APITime >= mathQASplit {
			return ToolQA
		}
		return ToolMath
	case FamilyConvAPI, FamilyConv:
		if !s.HasText() {
			return ToolVirtualEnv
		}
		if s.APIToken != nil {
			t := strings.ToLower(*s.APIToken)
			switch {
			case strings.Contains(t, "text to speech"):
				return ToolTTS
			case strings.Contains(t, "generate an image"):
				return ToolImage
			}
		}
		return ToolHuman
	}
	return ToolGeneric
}
