package predictor

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
)

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
// with count (nil: a TiktokenCounter of DefaultEncoding). The prompt is
// counted over the messages (plus 4 tokens each for the template) and the
// JSON of the function schemas. The tool is the first call's function; its
// duration is unknown.
func ConvertBFCL(questions, answers []byte, category string, count TokenCounter) ([]TraceRecord, error) {
	count, err := counterOr(count)
	if err != nil {
		return nil, err
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
	err = eachJSONLine(questions, func(line int, b []byte) error {
		var q bfclQuestion
		if err := json.Unmarshal(b, &q); err != nil || q.ID == "" {
			return fmt.Errorf("bfcl %s line %d: not a BFCL question: %v", category, line, err)
		}
		gt, ok := truth[q.ID]
		if !ok || len(gt) == 0 || len(q.Question) == 0 {
			return nil
		}
		rec := TraceRecord{FeatureVersion: FeatureVersion, Source: "bfcl/" + category, Program: q.ID}
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
