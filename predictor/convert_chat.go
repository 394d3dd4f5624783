package predictor

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// ChatTrajectory is one agent run as OpenAI-style chat messages: what the
// public agent trajectory sets (tau-bench's historical trajectories,
// ToolBench's answer trees) hold, and what ConvertChat turns into trace
// records.
type ChatTrajectory struct {
	ID       string
	Messages []ChatMessage
	// Tools are the tools offered with their schemas; nil when the set does
	// not say (ConvertChat then offers the tools the set's runs call).
	Tools []ChatTool
}

// ChatMessage is one message of a trajectory. Both OpenAI tool-call forms
// are read: tool_calls (and role "tool") and the older function_call (and
// role "function").
type ChatMessage struct {
	Role      string `json:"role"`
	Content   string `json:"content"`
	Name      string `json:"name"`
	ToolCalls []struct {
		Function ChatCall `json:"function"`
	} `json:"tool_calls"`
	FunctionCall *ChatCall `json:"function_call"`
}

// ChatCall is a tool call's name and JSON arguments.
type ChatCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ChatTool is an offered tool.
type ChatTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

func (m *ChatMessage) calls() []ChatCall {
	var out []ChatCall
	for _, tc := range m.ToolCalls {
		out = append(out, tc.Function)
	}
	if m.FunctionCall != nil {
		out = append(out, *m.FunctionCall)
	}
	return out
}

// perMessageTokens is what the chat format adds around each message's
// content (role and separators): OpenAI's documented count for its chat
// models.
const perMessageTokens = 4

// ConvertChat writes one trace record per assistant message of trajs: its
// output is the message's text and tool calls (name and arguments) counted
// with count, the producing model's tokenizer; the tool is the message's
// first tool call ("" when it answers the user and so ends the call); the
// last message before it and, for a tool result, the tool it came from are
// the inputs. Each trajectory is a program. Texts are kept up to
// MaxTextBytes (Featurize reads no further).
func ConvertChat(trajs []ChatTrajectory, source string, count func(string) int) ([]TraceRecord, error) {
	if count == nil {
		return nil, errors.New("convert chat: no token counter")
	}
	var called []string
	for _, t := range trajs {
		for _, m := range t.Messages {
			for _, c := range m.calls() {
				if !slices.Contains(called, c.Name) {
					called = append(called, c.Name)
				}
			}
		}
	}
	var out []TraceRecord
	for ti, t := range trajs {
		names, schema := called, 0
		if t.Tools != nil {
			names = nil
			for _, tool := range t.Tools {
				names = append(names, tool.Name)
				schema += len(tool.Name) + len(tool.Description) + len(tool.Parameters)
			}
		}
		id := t.ID
		if id == "" {
			id = strconv.Itoa(ti)
		}
		var (
			h                  History
			system, last, tool string
			prompt, seg        int
		)
		for _, m := range t.Messages {
			content := clipText(m.Content)
			switch m.Role {
			case "system":
				system = content
			case "user":
				last, tool = content, ""
			case "tool", "function":
				last, tool = content, m.Name
			case "assistant":
				calls := m.calls()
				out0 := count(m.Content)
				for _, c := range calls {
					out0 += count(c.Name) + count(c.Arguments)
				}
				rec := TraceRecord{FeatureVersion: FeatureVersion, Source: source, Program: id, Segment: seg,
					Input: Input{SystemPrompt: system, LastMessage: last, ToolNames: names, PromptTokens: prompt,
						LastTool: tool, ToolSchemaBytes: schema, History: h},
					PreToolOutputTokens: out0}
				if len(calls) > 0 {
					rec.Tool = calls[0].Name
				}
				out = append(out, rec)
				h = h.Observe(out0, rec.Tool)
				seg++
				prompt += out0 + perMessageTokens
				continue
			default:
				return nil, fmt.Errorf("convert chat: trajectory %s: message role %q (want system, user, assistant, tool or function)", id, m.Role)
			}
			prompt += count(m.Content) + perMessageTokens
		}
	}
	if len(out) == 0 {
		return nil, errors.New("convert chat: no assistant messages")
	}
	return out, nil
}

func clipText(s string) string {
	if len(s) > MaxTextBytes {
		return s[:MaxTextBytes]
	}
	return s
}

// ParseTauBench reads a tau-bench historical-trajectory file (a JSON list of
// runs {task_id, trial, traj: [messages]}).
func ParseTauBench(data []byte) ([]ChatTrajectory, error) {
	var runs []struct {
		TaskID int           `json:"task_id"`
		Trial  int           `json:"trial"`
		Traj   []ChatMessage `json:"traj"`
	}
	if err := json.Unmarshal(data, &runs); err != nil {
		return nil, fmt.Errorf("tau-bench trajectories: %w", err)
	}
	out := make([]ChatTrajectory, 0, len(runs))
	for _, r := range runs {
		out = append(out, ChatTrajectory{ID: fmt.Sprintf("task%d-trial%d", r.TaskID, r.Trial), Messages: r.Traj})
	}
	return out, nil
}

// ErrNoTrajectory is wrapped by ParseToolBenchAnswer for an answer file that
// holds no messages (a run ToolBench recorded as failed before any step).
var ErrNoTrajectory = errors.New("no trajectory")

// ParseToolBenchAnswer reads a ToolBench answer file: its longest
// train_messages list (the others are its prefixes) and the functions
// offered.
func ParseToolBenchAnswer(data []byte, id string) (ChatTrajectory, error) {
	var f struct {
		AnswerGeneration struct {
			TrainMessages [][]ChatMessage `json:"train_messages"`
			Function      []ChatTool      `json:"function"`
		} `json:"answer_generation"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return ChatTrajectory{}, fmt.Errorf("toolbench answer %s: %w", id, err)
	}
	var longest []ChatMessage
	for _, m := range f.AnswerGeneration.TrainMessages {
		if len(m) > len(longest) {
			longest = m
		}
	}
	if len(longest) == 0 {
		return ChatTrajectory{}, fmt.Errorf("%w: toolbench answer %s has no train_messages", ErrNoTrajectory, id)
	}
	tools := f.AnswerGeneration.Function
	if tools == nil {
		tools = []ChatTool{}
	}
	return ChatTrajectory{ID: id, Messages: longest, Tools: tools}, nil
}
