package predictor

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// SWEAgentShellTool is the tool name ConvertSWEAgent gives every action:
// SWE-agent runs each action as a command line in its container's shell, so
// the shell is the tool and the command its argument (ArgumentClass reads
// the program from it).
const SWEAgentShellTool = "bash"

// maxCommandBytes caps the command kept in a converted record's arguments:
// its program is what the duration estimator reads (ArgumentClass), and
// agents write whole files through heredocs.
const maxCommandBytes = 128

// shellArgs is the JSON arguments {"command": cmd}, cmd cut to
// maxCommandBytes (at a rune boundary).
func shellArgs(cmd string) string {
	args, _ := json.Marshal(map[string]string{"command": clipTo(cmd, maxCommandBytes)})
	return string(args)
}

// ConvertSWEAgent turns one trajectory of SWE-agent (a .traj file, 1.0 or
// later) or of mini-swe-agent (a .traj.json file, trajectory_format
// "mini-swe-agent-1.x", version 2 or later) into trace records, one per
// shell command whose wall time the trajectory records: the command as the
// shell tool's "command" argument (cut to 128 bytes) and its measured time
// as the tool's duration. SWE-agent records each step's execution_time;
// mini-swe-agent timestamps each model response when it arrives and each
// command's output when it is done, so a command took the time from the
// response (or from the previous command of the same response) to its
// output. Trajectories that record neither give an error. SWE-agent's
// records carry durations only (PreToolOutputTokens is 0: they are for
// `predictor durations`, not for the length model); mini-swe-agent's are
// also segments, with the tokens the model's API counted (convertMiniSWEAgent).
func ConvertSWEAgent(data []byte, source, program string) ([]TraceRecord, error) {
	var probe struct {
		Format   string          `json:"trajectory_format"`
		Messages json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(data, &probe); err == nil && (strings.HasPrefix(probe.Format, "mini-swe-agent") || probe.Messages != nil) {
		return convertMiniSWEAgent(data, source, program)
	}
	var traj struct {
		Trajectory []struct {
			Action        string          `json:"action"`
			ExecutionTime json.RawMessage `json:"execution_time"`
		} `json:"trajectory"`
	}
	if err := json.Unmarshal(data, &traj); err != nil {
		return nil, fmt.Errorf("swe-agent trajectory: %w", err)
	}
	if traj.Trajectory == nil {
		return nil, errors.New(`swe-agent trajectory: no "trajectory" array`)
	}
	var out []TraceRecord
	for i, step := range traj.Trajectory {
		if len(step.ExecutionTime) == 0 || string(step.ExecutionTime) == "null" || step.Action == "" {
			continue
		}
		secs, err := sweAgentSeconds(step.ExecutionTime)
		if err != nil {
			return nil, fmt.Errorf("swe-agent trajectory: step %d: %w", i, err)
		}
		out = append(out, TraceRecord{
			FeatureVersion: FeatureVersion, Source: source, Program: program, Segment: i,
			Tool: SWEAgentShellTool, ToolArgs: shellArgs(step.Action), ToolDurationS: &secs,
		})
	}
	if len(out) == 0 {
		return nil, errors.New("swe-agent trajectory: no step has an execution_time (SWE-agent before 1.0 did not record it)")
	}
	return out, nil
}

// sweAgentSeconds reads execution_time, which SWE-agent writes as a number
// or, in some versions, as a string holding one.
func sweAgentSeconds(raw json.RawMessage) (float64, error) {
	var v float64
	if err := json.Unmarshal(raw, &v); err != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return 0, fmt.Errorf("execution_time %s: want seconds", raw)
		}
		if v, err = strconv.ParseFloat(s, 64); err != nil {
			return 0, fmt.Errorf("execution_time %q: want seconds", s)
		}
	}
	if !validSeconds(v) {
		return 0, fmt.Errorf("execution_time %v: want seconds >= 0", v)
	}
	return v, nil
}

// maxMiniMessageBytes caps the last message kept in a mini-swe-agent
// record: a coding agent's tool outputs are long, and the 99 runs converted
// so far would take 2.1 MB compressed at Featurize's MaxTextBytes.
const maxMiniMessageBytes = 2048

// clipTo cuts s to at most n bytes, at a rune boundary.
func clipTo(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// convertMiniSWEAgent reads mini-swe-agent's messages: an assistant message
// (extra.timestamp: when the response arrived; extra.response.usage: its
// token counts, by the model's own tokenizer) with its tool calls, then one
// tool message per call (extra.timestamp: when the command was done),
// matched by tool_call_id. Each assistant message is a segment: a record
// with its output tokens and inputs; its tool call's duration is added when
// both timestamps are there. A second call of the same message (none in the
// sets converted so far) becomes a record of its own with no output tokens.
func convertMiniSWEAgent(data []byte, source, program string) ([]TraceRecord, error) {
	var traj struct {
		Messages []struct {
			Role      string `json:"role"`
			Content   string `json:"content"`
			ToolCalls []struct {
				ID       string   `json:"id"`
				Function ChatCall `json:"function"`
			} `json:"tool_calls"`
			ToolCallID string `json:"tool_call_id"`
			Extra      struct {
				Timestamp *float64 `json:"timestamp"`
				Response  struct {
					Usage struct {
						CompletionTokens *int `json:"completion_tokens"`
						PromptTokens     int  `json:"prompt_tokens"`
					} `json:"usage"`
				} `json:"response"`
			} `json:"extra"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(data, &traj); err != nil {
		return nil, fmt.Errorf("mini-swe-agent trajectory: %w", err)
	}
	var (
		out          []TraceRecord
		pending      = map[string]int{} // tool call id → index of its record in out
		since        *float64           // when the last response arrived or the last command ended
		h            History
		system, last string
		lastTool     string
		timed        int
	)
	for _, m := range traj.Messages {
		switch m.Role {
		case "system":
			system = clipText(m.Content)
		case "user":
			last, lastTool = clipTo(m.Content, maxMiniMessageBytes), ""
		case "assistant":
			clear(pending)
			since = m.Extra.Timestamp
			usage := m.Extra.Response.Usage
			tokens := 0
			if usage.CompletionTokens != nil {
				tokens = max(*usage.CompletionTokens, 0)
			}
			rec := TraceRecord{FeatureVersion: FeatureVersion, Source: source, Program: program, Segment: h.Calls,
				Input: Input{SystemPrompt: system, LastMessage: last, ToolNames: []string{SWEAgentShellTool},
					PromptTokens: max(usage.PromptTokens, 0), LastTool: lastTool, History: h},
				PreToolOutputTokens: tokens}
			for i, tc := range m.ToolCalls {
				var args struct {
					Command string `json:"command"`
				}
				_ = json.Unmarshal([]byte(tc.Function.Arguments), &args)
				r := rec
				if i > 0 { // a second call: its duration only
					r.PreToolOutputTokens, r.Input = 0, Input{}
				}
				r.Tool, r.ToolArgs = tc.Function.Name, shellArgs(args.Command)
				pending[tc.ID] = len(out)
				out = append(out, r)
			}
			if len(m.ToolCalls) == 0 {
				out = append(out, rec)
			}
			tool := ""
			if len(m.ToolCalls) > 0 {
				tool = m.ToolCalls[0].Function.Name
			}
			h = h.Observe(tokens, tool)
		case "tool":
			last, lastTool = clipTo(m.Content, maxMiniMessageBytes), SWEAgentShellTool
			i, ok := pending[m.ToolCallID]
			end := m.Extra.Timestamp
			if ok && since != nil && end != nil {
				if secs := *end - *since; validSeconds(secs) {
					out[i].ToolDurationS = &secs
					timed++
				}
			}
			delete(pending, m.ToolCallID)
			since = end
		}
	}
	if timed == 0 {
		return nil, errors.New("mini-swe-agent trajectory: no tool call with timestamps (mini-swe-agent before 2.0 did not record them)")
	}
	return out, nil
}
