package infercept

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/pitstop-llm/pitstop/predictor"
)

// SegmentCounts are a segment's token counts made by a real tokenizer.
type SegmentCounts struct {
	Output     int // completion tokens
	ToolReturn int // api_token_length
}

// RecordOptions configures TraceRecords.
type RecordOptions struct {
	// Source prefixes each record's Source ("infercept-multi" gives
	// "infercept-multi/hex", …).
	Source string
	// Counts, if set, gives the tokenizer counts of each request's segments
	// (request id → segments, in order; bench/workload's embedded sets have
	// them, counted with GPT-2 BPE) and its first prompt. They replace the
	// counts of the text; later prompts are then built as the engine builds
	// them: prompt(i+1) = prompt(i) + output(i) + tool return(i).
	Counts map[string]RequestCounts
	// Count counts text the Counts do not cover (nil: a
	// predictor.TiktokenCounter of predictor.DefaultEncoding, GPT-2 BPE: the
	// tokenizer of GPT-J, the model the traces were made with).
	Count predictor.TokenCounter
}

// RequestCounts are the tokenizer counts of one InferCept request.
type RequestCounts struct {
	Prompt   int // the first segment's prompt
	Segments []SegmentCounts
}

// TraceRecords turns the InferCept/LAMPS dataset (merged_exp_uniform.json
// or diverse_oneapi_merged_exp_uniform.json: request id → list of segments)
// into the predictor's trace records, one per segment, requests in sorted id order.
//
// Per segment: the label is completion_tokens, the Counts' output, or the
// counted completion text; the prompt likewise (see RecordOptions.Counts);
// the last message is the request's first prompt for segment 0 and the
// previous segment's api_token text after that; the tool is named as
// bench/workload names it (math / qa by api_time for hex keys; tts,
// image-gen or human-think by the api_token text, virtual-env for count-only
// segments, for conversation keys) and lasts api_time seconds; a segment
// without api_time ends its request with no tool. Tools offered: [math, qa]
// for hex requests, [tts, image-gen] for N_M text requests, [virtual-env] for
// count-only conversation requests, none for N text requests. History
// accumulates over the request's segments.
//
// The text families' completions are cut at 256 characters in the dataset,
// so their labels are short.
func TraceRecords(data []byte, opt RecordOptions) ([]predictor.TraceRecord, error) {
	count := opt.Count
	countText := func(s string) (int, error) {
		if count == nil { // loaded only for traces with text to count
			c, err := predictor.TiktokenCounter(predictor.DefaultEncoding)
			if err != nil {
				return 0, err
			}
			count = c
		}
		return count(s), nil
	}
	reqs, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("infercept: not an InferCept dataset: %w", err)
	}
	if len(reqs) == 0 {
		return nil, errors.New("infercept: dataset has no requests")
	}
	slices.SortFunc(reqs, func(a, b Request) int { return strings.Compare(a.Key, b.Key) })
	var out []predictor.TraceRecord
	for _, req := range reqs {
		key, segs := req.Key, req.Segments
		family := FamilyOf(key)
		fam := family.String()
		counts, haveCounts := opt.Counts[key]
		if haveCounts && len(counts.Segments) < len(segs) {
			return nil, fmt.Errorf("infercept: request %s has %d segments but its counts have %d", key, len(segs), len(counts.Segments))
		}
		text := slices.ContainsFunc(segs, func(s Segment) bool { return s.HasText() })
		var offered []string
		switch {
		case family == FamilyHex:
			offered = []string{ToolMath, ToolQA}
		case family == FamilyConvAPI && text:
			offered = []string{ToolTTS, ToolImage}
		case (family == FamilyConvAPI || family == FamilyConv) && !text:
			offered = []string{ToolVirtualEnv}
		}
		var hist predictor.History
		prompt := 0
		for i, s := range segs {
			where := func(format string, args ...any) error {
				return fmt.Errorf("infercept: request %s segment %d: %s", key, i, fmt.Sprintf(format, args...))
			}
			rec := predictor.TraceRecord{FeatureVersion: predictor.FeatureVersion, Source: opt.Source + "/" + fam, Program: key, Segment: i}
			rec.Input.ToolNames = offered
			rec.Input.History = hist
			switch {
			case haveCounts:
				if i == 0 {
					prompt = counts.Prompt
				}
				rec.Input.PromptTokens = prompt
				rec.PreToolOutputTokens = counts.Segments[i].Output
				rec.ToolReturnTokens = counts.Segments[i].ToolReturn
				prompt += rec.PreToolOutputTokens + rec.ToolReturnTokens
			default:
				switch {
				case s.PromptTokens != nil:
					rec.Input.PromptTokens = *s.PromptTokens
				case s.Prompt != nil:
					if rec.Input.PromptTokens, err = countText(*s.Prompt); err != nil {
						return nil, err
					}
				default:
					return nil, where("neither prompt_tokens nor prompt")
				}
				switch {
				case s.CompletionTokens != nil:
					rec.PreToolOutputTokens = *s.CompletionTokens
				case s.Completion != nil:
					if rec.PreToolOutputTokens, err = countText(*s.Completion); err != nil {
						return nil, err
					}
				default:
					return nil, where("neither completion_tokens nor completion")
				}
				switch {
				case s.APITokenLength != nil:
					rec.ToolReturnTokens = max(*s.APITokenLength, 0)
				case s.APIToken != nil && s.APITime != nil:
					if rec.ToolReturnTokens, err = countText(*s.APIToken); err != nil {
						return nil, err
					}
				}
			}
			if i == 0 && s.Prompt != nil {
				rec.Input.LastMessage = *s.Prompt
			} else if i > 0 && segs[i-1].APIToken != nil {
				rec.Input.LastMessage = *segs[i-1].APIToken
			}
			if rec.Input.PromptTokens < 0 || rec.PreToolOutputTokens < 0 {
				return nil, where("negative token count")
			}
			if s.APITime != nil {
				if t := *s.APITime; !(t >= 0) || math.IsInf(t, 0) {
					return nil, where("api_time %v is not a duration", *s.APITime)
				}
				d := *s.APITime
				rec.ToolDurationS = &d
				rec.Tool = ToolName(key, &s)
			} else {
				rec.ToolReturnTokens = 0
			}
			out = append(out, rec)
			hist = hist.Observe(rec.PreToolOutputTokens, rec.Tool)
		}
	}
	return out, nil
}
