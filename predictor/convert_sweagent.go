package predictor

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// SWEAgentShellTool is the tool name ConvertSWEAgent gives every action:
// SWE-agent runs each action as a command line in its container's shell, so
// the shell is the tool and the command its argument (ArgumentClass reads
// the program from it).
const SWEAgentShellTool = "bash"

// ConvertSWEAgent turns one SWE-agent trajectory (a .traj file, SWE-agent
// 1.0 or later) into trace records, one per step that recorded its
// execution_time: the step's action as the shell tool's "command" argument
// and its measured wall time as the tool's duration. Older trajectories did
// not record execution_time and give an error. The records carry durations,
// not output lengths: PreToolOutputTokens is 0, so they are for
// `predictor durations`, not for training the length model.
func ConvertSWEAgent(data []byte, source, program string) ([]TraceRecord, error) {
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
		if len(step.ExecutionTime) == 0 || step.Action == "" {
			continue
		}
		secs, err := sweAgentSeconds(step.ExecutionTime)
		if err != nil {
			return nil, fmt.Errorf("swe-agent trajectory: step %d: %w", i, err)
		}
		args, err := json.Marshal(map[string]string{"command": step.Action})
		if err != nil {
			return nil, err
		}
		out = append(out, TraceRecord{
			FeatureVersion: FeatureVersion, Source: source, Program: program, Segment: i,
			Tool: SWEAgentShellTool, ToolArgs: string(args), ToolDurationS: &secs,
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
