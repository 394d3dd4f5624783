package workload

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/pitstop-llm/pitstop/bench/workload/infercept"
)

// InferceptOptions changes how an InferCept-format trace becomes a workload.
type InferceptOptions struct {
	// KeepTrailingTools keeps a tool call found on a request's last segment. The InferCept
	// sets have them (184 of the multi-API set's 397 requests: every count-only conversation
	// request and the text ones of the N_M family end with an api_time); InferCept's benchmark
	// runs that tool and appends its result, and the request then ends. Kept, such a tool is
	// followed by a final segment with Decode 0 (2,238 segments and 1,841 tool calls for the
	// multi-API set). By default it is dropped, because nothing the model generates depends on
	// it (2,054 segments, 1,657 tool calls), and Workload.Notes says how many were dropped.
	KeepTrailingTools bool
}

// InferceptMulti is the InferCept / LAMPS multi-API set (397 requests, 1,841 tool calls) as
// InferCept's benchmark replays it: a tool on a request's last segment runs too, and the call
// then generates its final token (the replay driver makes a 0-token segment generate one).
// See ParseInfercept for the mapping.
func InferceptMulti() (*Workload, error) {
	return LoadInfercept(true, InferceptOptions{KeepTrailingTools: true})
}

// InferceptSingle is the single-API set (397 requests, one tool call each), trailing tools kept.
func InferceptSingle() (*Workload, error) {
	return LoadInfercept(false, InferceptOptions{KeepTrailingTools: true})
}

// LoadInfercept loads one of the embedded InferCept sets. Its token counts were made offline
// from the published text with the GPT-2 byte-level BPE (what GPT-J, InferCept's model, uses):
// see internal/convert.
func LoadInfercept(multi bool, opt InferceptOptions) (*Workload, error) {
	name, file, desc := "infercept-single", "infercept_single_counts.json.gz",
		"InferCept/LAMPS single-API set: 397 requests, one tool call each (diverse_oneapi_merged_exp_uniform.json)"
	if multi {
		name, file, desc = "infercept-multi", "infercept_multi_counts.json.gz",
			"InferCept/LAMPS multi-API set: 397 requests with math, QA, TTS, image, virtual-environment and human-think pauses (merged_exp_uniform.json)"
	}
	data, err := readData(file)
	if err != nil {
		return nil, err
	}
	w, err := ParseInfercept(name, data, opt)
	if err != nil {
		return nil, fmt.Errorf("embedded %s: %w", name, err)
	}
	w.Description = desc
	return w, nil
}

// LoadFile loads a user's own trace in the InferCept JSON format (see ParseInfercept) with
// the default options. The workload is named after the file.
func LoadFile(path string) (*Workload, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	w, err := ParseInfercept(filepath.Base(path), data, InferceptOptions{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return w, nil
}

// ParseInfercept turns an InferCept-format trace into a workload:
//
//	{"<request id>": [{"prompt_tokens": P, "completion_tokens": C, "api_time": T, "api_token_length": R, "tool": "name"}, ...], ...}
//
// One Program per request (in file order, ID = the request id), one Call per program, one
// Segment per trace segment: Decode = completion_tokens, ToolTime = api_time, ToolReturn =
// api_token_length, Tool = the "tool" field or, without one, a name from the request id's
// family (32-hex: "math" below 0.01 s, else "qa"; "N_M" and "N" ids: "tts", "image-gen" or
// "human-think" from the api_token text, "virtual-env" for count-only segments; other ids:
// "tool"). Call.NewTokens = the first segment's prompt_tokens. Every segment but the last must
// have api_time (the tool call); api_token_length without api_time is an error, as in
// InferCept's benchmark.
//
// Only the first prompt is used: later prompts are what the engine builds by appending each
// segment's completion and tool return. The trace's own prompt_tokens must satisfy
// prompt(i+1) = prompt(i) + completion(i) + api_token_length(i); pairs that do not are counted
// in Workload.Notes and otherwise ignored (the replayed context then differs from the trace's
// prompt_tokens by the difference). In the embedded multi-API set all 662 count-only pairs hold
// and 454 of 995 tokenized text pairs differ by 1 to 3 tokens, because BPE merges across the
// boundary of separately counted pieces (26 of 195, by at most 2, in the single-API set).
//
// A negative api_token_length (4 segments of the multi-API set have -2) becomes 0 and is noted.
// Text fields without counts are an error: the runtime carries no tokenizer; convert such a
// trace first with `go run ./bench/workload/internal/convert -in trace.json -out counts.json`.
// Unknown fields are ignored.
func ParseInfercept(name string, data []byte, opt InferceptOptions) (*Workload, error) {
	reqs, err := infercept.Parse(data)
	if err != nil {
		return nil, err
	}
	w := &Workload{Name: name, Description: "InferCept-format trace " + name}
	var negReturns, pairs, broken, trailing int
	for _, r := range reqs {
		call := Call{ID: "c0", Thread: "main"}
		for si := range r.Segments {
			s := &r.Segments[si]
			where := func(format string, a ...any) error {
				return fmt.Errorf("request %q segment %d: %s", r.Key, si, fmt.Sprintf(format, a...))
			}
			last := si == len(r.Segments)-1
			if s.CompletionTokens == nil {
				if s.Completion != nil {
					return nil, where("has completion text but no completion_tokens; the runtime has no tokenizer: convert the trace first (go run ./bench/workload/internal/convert -in FILE -out FILE)")
				}
				return nil, where("missing completion_tokens")
			}
			if si == 0 && s.PromptTokens == nil {
				if s.Prompt != nil {
					return nil, where("has prompt text but no prompt_tokens; the runtime has no tokenizer: convert the trace first (go run ./bench/workload/internal/convert -in FILE -out FILE)")
				}
				return nil, where("missing prompt_tokens (needed on the first segment)")
			}
			if s.APITokenLength == nil && s.APIToken != nil && s.APITime != nil {
				return nil, where("has api_token text but no api_token_length; convert the trace first (go run ./bench/workload/internal/convert -in FILE -out FILE)")
			}
			if s.APITokenLength != nil && s.APITime == nil {
				return nil, where("api_token_length without api_time")
			}
			if s.APITime == nil && !last {
				return nil, where("no api_time: only the last of %d segments may end without a tool call", len(r.Segments))
			}
			c := *s.CompletionTokens
			if c < 0 || c > MaxTokens {
				return nil, where("completion_tokens %d: must be in [0, %d]", c, MaxTokens)
			}
			if p := s.PromptTokens; p != nil && (*p < 0 || *p > MaxTokens) {
				return nil, where("prompt_tokens %d: must be in [0, %d]", *p, MaxTokens)
			}
			seg := Segment{Decode: c}
			if s.APITime != nil {
				t := *s.APITime
				if badFloat(t) {
					return nil, where("api_time %g: must be a finite number of seconds >= 0", t)
				}
				ret := 0
				if s.APITokenLength != nil {
					ret = *s.APITokenLength
					if ret > MaxTokens {
						return nil, where("api_token_length %d: must be at most %d", ret, MaxTokens)
					}
					if ret < 0 {
						negReturns++
						ret = 0
					}
				}
				seg.Tool, seg.ToolTime, seg.ToolReturn = infercept.ToolName(r.Key, s), t, ret
			}
			if si == 0 {
				call.NewTokens = *s.PromptTokens
			} else if prev := &r.Segments[si-1]; prev.PromptTokens != nil && s.PromptTokens != nil {
				pairs++
				want := *prev.PromptTokens + *prev.CompletionTokens
				if prev.APITokenLength != nil {
					want += *prev.APITokenLength
				}
				if *s.PromptTokens != want {
					broken++
				}
			}
			if last && seg.Tool != "" {
				trailing++
				if opt.KeepTrailingTools {
					call.Segments = append(call.Segments, seg, Segment{})
					continue
				}
				seg = Segment{Decode: seg.Decode}
			}
			call.Segments = append(call.Segments, seg)
		}
		w.Programs = append(w.Programs, Program{ID: r.Key, Calls: []Call{call}})
	}
	if trailing > 0 {
		if opt.KeepTrailingTools {
			w.Notes = append(w.Notes, fmt.Sprintf("%d requests end in a tool call; each is followed by a 0-token final segment", trailing))
		} else {
			w.Notes = append(w.Notes, fmt.Sprintf("%d requests end in a tool call on their last segment; those tool calls were dropped (nothing generated depends on them)", trailing))
		}
	}
	if negReturns > 0 {
		w.Notes = append(w.Notes, fmt.Sprintf("%d segments had a negative api_token_length, replayed as 0", negReturns))
	}
	if broken > 0 {
		w.Notes = append(w.Notes, fmt.Sprintf("%d of %d consecutive segment pairs break prompt(i+1) = prompt(i) + completion(i) + api_token_length(i); the replay appends each segment's own counts", broken, pairs))
	}
	if err := w.Validate(); err != nil {
		return nil, err
	}
	return w, nil
}
