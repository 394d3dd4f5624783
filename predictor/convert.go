package predictor

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pitstop-llm/pitstop/bench/workload/infercept"
)

// SegmentCounts are a segment's token counts made by a real tokenizer.
type SegmentCounts struct {
	Output     int // completion tokens
	ToolReturn int // api_token_length
}

// InferceptOptions configures ConvertInfercept.
type InferceptOptions struct {
	// Source prefixes each record's Source ("infercept-multi" gives
	// "infercept-multi/hex", …).
	Source string
	// Counts, if set, gives the tokenizer counts of each request's segments
	// (request id → segments, in order; bench/workload's embedded sets have
	// them, counted with GPT-2 BPE) and its first prompt. They replace the
	// counts of the text; later prompts are then built as the engine builds
	// them: prompt(i+1) = prompt(i) + output(i) + tool return(i).
	Counts map[string]RequestCounts
	// Count counts text the Counts do not cover (nil: ApproxTokens).
	Count TokenCounter
}

// RequestCounts are the tokenizer counts of one InferCept request.
type RequestCounts struct {
	Prompt   int // the first segment's prompt
	Segments []SegmentCounts
}

// ConvertInfercept turns the InferCept/LAMPS dataset (merged_exp_uniform.json
// or diverse_oneapi_merged_exp_uniform.json: request id → list of segments)
// into trace records, one per segment, requests in sorted id order.
//
// Per segment: the label is completion_tokens, the Counts' output, or the
// counted completion text; the prompt likewise (see InferceptOptions.Counts);
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
func ConvertInfercept(data []byte, opt InferceptOptions) ([]TraceRecord, error) {
	count := opt.Count
	if count == nil {
		count = ApproxTokens
	}
	reqs, err := infercept.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("infercept: not an InferCept dataset: %w", err)
	}
	if len(reqs) == 0 {
		return nil, errors.New("infercept: dataset has no requests")
	}
	slices.SortFunc(reqs, func(a, b infercept.Request) int { return strings.Compare(a.Key, b.Key) })
	var out []TraceRecord
	for _, req := range reqs {
		key, segs := req.Key, req.Segments
		family := infercept.FamilyOf(key)
		fam := family.String()
		counts, haveCounts := opt.Counts[key]
		if haveCounts && len(counts.Segments) < len(segs) {
			return nil, fmt.Errorf("infercept: request %s has %d segments but its counts have %d", key, len(segs), len(counts.Segments))
		}
		text := slices.ContainsFunc(segs, func(s infercept.Segment) bool { return s.HasText() })
		var offered []string
		switch {
		case family == infercept.FamilyHex:
			offered = []string{infercept.ToolMath, infercept.ToolQA}
		case family == infercept.FamilyConvAPI && text:
			offered = []string{infercept.ToolTTS, infercept.ToolImage}
		case (family == infercept.FamilyConvAPI || family == infercept.FamilyConv) && !text:
			offered = []string{infercept.ToolVirtualEnv}
		}
		var hist History
		prompt := 0
		for i, s := range segs {
			where := func(format string, args ...any) error {
				return fmt.Errorf("infercept: request %s segment %d: %s", key, i, fmt.Sprintf(format, args...))
			}
			rec := TraceRecord{FeatureVersion: FeatureVersion, Source: opt.Source + "/" + fam, Program: key, Segment: i}
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
					rec.Input.PromptTokens = count(*s.Prompt)
					rec.TokensApprox = true
				default:
					return nil, where("neither prompt_tokens nor prompt")
				}
				switch {
				case s.CompletionTokens != nil:
					rec.PreToolOutputTokens = *s.CompletionTokens
				case s.Completion != nil:
					rec.PreToolOutputTokens = count(*s.Completion)
					rec.TokensApprox = true
				default:
					return nil, where("neither completion_tokens nor completion")
				}
				switch {
				case s.APITokenLength != nil:
					rec.ToolReturnTokens = max(*s.APITokenLength, 0)
				case s.APIToken != nil && s.APITime != nil:
					rec.ToolReturnTokens = count(*s.APIToken)
					rec.TokensApprox = true
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
				if !validSeconds(*s.APITime) {
					return nil, where("api_time %v is not a duration", *s.APITime)
				}
				d := *s.APITime
				rec.ToolDurationS = &d
				rec.Tool = infercept.ToolName(key, &s)
			} else {
				rec.ToolReturnTokens = 0
			}
			out = append(out, rec)
			hist = hist.Observe(rec.PreToolOutputTokens, rec.Tool)
		}
	}
	return out, nil
}

type bfclQuestion struct {
	ID       string           `json:"id"`
	Question [][]bfclMessage  `json:"question"`
	Function []map[string]any `json:"function"`
}

type bfclMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type bfclAnswer struct {
	ID          string           `json:"id"`
	GroundTruth []map[string]any `json:"ground_truth"`
}

// bfclMessageOverhead approximates the chat template's tokens per message.
const bfclMessageOverhead = 4

// ConvertBFCL turns one single-turn BFCL category (the questions file and its
// possible_answer file, JSON lines) into trace records, one per question that
// has a ground truth. BFCL has prompts and function schemas but no model
// outputs, so the pre-tool output is taken to be the ground-truth call
// written as OpenAI-style tool-call JSON — [{"name":…,"arguments":{…}}, …],
// each parameter with its first accepted value, parameters whose accepted
// values are only "" (optional, omitted) dropped — and its length is counted
// with count (nil: ApproxTokens). The prompt is counted over the messages
// (plus 4 tokens each for the template) and the JSON of the function schemas.
// The tool is the first call's function; its duration is unknown.
func ConvertBFCL(questions, answers []byte, category string, count TokenCounter) ([]TraceRecord, error) {
	if count == nil {
		count = ApproxTokens
	}
	truth := map[string][]map[string]any{}
	if err := eachJSONLine(answers, func(line int, b []byte) error {
		var a bfclAnswer
		if err := json.Unmarshal(b, &a); err != nil || a.ID == "" {
			return fmt.Errorf("bfcl %s answers line %d: not a possible_answer record: %v", category, line, err)
		}
		truth[a.ID] = a.GroundTruth
		return nil
	}); err != nil {
		return nil, err
	}
	var out []TraceRecord
	err := eachJSONLine(questions, func(line int, b []byte) error {
		var q bfclQuestion
		if err := json.Unmarshal(b, &q); err != nil || q.ID == "" {
			return fmt.Errorf("bfcl %s line %d: not a BFCL question: %v", category, line, err)
		}
		gt, ok := truth[q.ID]
		if !ok || len(gt) == 0 || len(q.Question) == 0 {
			return nil
		}
		rec := TraceRecord{FeatureVersion: FeatureVersion, Source: "bfcl/" + category, Program: q.ID, TokensApprox: true}
		for _, m := range q.Question[0] {
			rec.Input.PromptTokens += count(m.Content) + bfclMessageOverhead
			switch m.Role {
			case "system":
				rec.Input.SystemPrompt = m.Content
			case "user", "tool":
				rec.Input.LastMessage = m.Content
			}
		}
		for _, f := range q.Function {
			if name, ok := f["name"].(string); ok {
				rec.Input.ToolNames = append(rec.Input.ToolNames, name)
			}
		}
		schema, err := json.Marshal(q.Function)
		if err != nil {
			return fmt.Errorf("bfcl %s line %d: %w", category, line, err)
		}
		rec.Input.PromptTokens += count(string(schema))
		call, first, err := bfclCallJSON(gt)
		if err != nil {
			return fmt.Errorf("bfcl %s line %d (%s): %w", category, line, q.ID, err)
		}
		rec.PreToolOutputTokens = count(call)
		rec.Tool = first
		out = append(out, rec)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("bfcl %s: no question with a ground truth", category)
	}
	return out, nil
}

// bfclCallJSON writes the ground truth as tool-call JSON and returns it with
// the first function's name.
func bfclCallJSON(gt []map[string]any) (string, string, error) {
	type call struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}
	var calls []call
	first := ""
	for _, c := range gt {
		if len(c) != 1 {
			return "", "", fmt.Errorf("ground truth call with %d functions, want 1", len(c))
		}
		for name, args := range c {
			am, ok := args.(map[string]any)
			if !ok {
				return "", "", fmt.Errorf("ground truth arguments of %s are not an object", name)
			}
			resolved, _ := resolveArgs(am)
			calls = append(calls, call{Name: name, Arguments: resolved})
			if first == "" {
				first = name
			}
		}
	}
	b, err := json.Marshal(calls)
	if err != nil {
		return "", "", err
	}
	return string(b), first, nil
}

// resolveArgs maps each parameter to its first accepted value (a list in
// BFCL), dropping parameters whose only accepted value is "" (omitted).
func resolveArgs(m map[string]any) (map[string]any, bool) {
	out := map[string]any{}
	for k, v := range m {
		if val, ok := firstAccepted(v); ok {
			out[k] = val
		}
	}
	return out, len(out) > 0
}

func firstAccepted(v any) (any, bool) {
	list, ok := v.([]any)
	if !ok {
		return v, true
	}
	for _, x := range list {
		if s, isStr := x.(string); isStr && s == "" {
			continue
		}
		if nested, isMap := x.(map[string]any); isMap {
			r, _ := resolveArgs(nested)
			return r, true
		}
		return x, true
	}
	return nil, false
}

func eachJSONLine(data []byte, fn func(line int, b []byte) error) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if err := fn(line, b); err != nil {
			return err
		}
	}
	return sc.Err()
}
