package predictor

import (
	"encoding/json"
	"fmt"
)

// ToolBench's answer files keep, besides the path that answered
// (train_messages, ParseToolBenchAnswer), the whole depth-first search that
// found it: every turn the model generated, on branches the search later
// gave up too. Each turn is a model call with a length, as much an output
// of the agent as the kept path's: ConvertToolBenchTree makes a record of
// each, five times the kept path's count on ToolBench's data_example.

// toolBenchNode is a node of an answer file's search tree: a "Thought"
// (the text of a turn), an "Action" (the tool it calls) or an "Action
// Input" (the call's arguments, with the tool's observation).
type toolBenchNode struct {
	Type        string          `json:"node_type"`
	Description string          `json:"description"`
	Observation string          `json:"observation"`
	Children    []toolBenchNode `json:"children"`
}

// ConvertToolBenchTree writes one trace record per model turn of a
// ToolBench answer file's search tree, in the order the search generated
// them (depth first): a turn is a thought, the tool it calls and the
// call's arguments (a thought without a call is a reply), counted as
// ConvertChat counts an assistant message. A turn's inputs are those of
// the branch it is on (the system prompt and query of the kept path, then
// the branch's earlier turns and observations), as the model saw them. The
// file is one program, whose records follow the search's order.
func ConvertToolBenchTree(data []byte, id, source string, count func(string) int) ([]TraceRecord, error) {
	kept, err := ParseToolBenchAnswer(data, id)
	if err != nil {
		return nil, err
	}
	var preamble []ChatMessage // before the first turn: the system prompt and the query
	for _, m := range kept.Messages {
		if m.Role != "system" && m.Role != "user" {
			break
		}
		preamble = append(preamble, m)
	}
	return convertToolBenchTree(data, id, source, count, preamble, kept.Tools)
}

// convertToolBenchTree converts the search tree of answer file data, each
// turn's inputs starting with preamble and offering tools.
func convertToolBenchTree(data []byte, id, source string, count func(string) int, preamble []ChatMessage, tools []ChatTool) ([]TraceRecord, error) {
	var f struct {
		Tree struct {
			Tree toolBenchNode `json:"tree"`
		} `json:"tree"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("toolbench answer %s: tree: %w", id, err)
	}
	var out []TraceRecord
	// turn converts the branch up to and including turn and keeps its
	// record (the last), numbered in the search's order.
	turn := func(branch []ChatMessage, m ChatMessage) error {
		recs, err := ConvertChat([]ChatTrajectory{{ID: id, Messages: append(branch[:len(branch):len(branch)], m), Tools: tools}}, source, count)
		if err != nil {
			return err
		}
		r := recs[len(recs)-1]
		r.Segment = len(out)
		out = append(out, r)
		return nil
	}
	var walk func(n toolBenchNode, branch []ChatMessage) error
	calls := func(thought string, action toolBenchNode, branch []ChatMessage) error {
		for _, in := range action.Children {
			if in.Type != "Action Input" {
				continue
			}
			m := ChatMessage{Role: "assistant", Content: thought, FunctionCall: &ChatCall{Name: action.Description, Arguments: in.Description}}
			if err := turn(branch, m); err != nil {
				return err
			}
			next := append(branch[:len(branch):len(branch)], m, ChatMessage{Role: "function", Name: action.Description, Content: in.Observation})
			if err := walk(in, next); err != nil {
				return err
			}
		}
		return nil
	}
	walk = func(n toolBenchNode, branch []ChatMessage) error {
		for _, c := range n.Children {
			switch c.Type {
			case "Thought":
				acted := false
				for _, a := range c.Children {
					if a.Type == "Action" {
						acted = true
						if err := calls(c.Description, a, branch); err != nil {
							return err
						}
					}
				}
				if !acted {
					if err := turn(branch, ChatMessage{Role: "assistant", Content: c.Description}); err != nil {
						return err
					}
				}
			case "Action":
				if err := calls("", c, branch); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(f.Tree.Tree, preamble); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: toolbench answer %s has no turns in its tree", ErrNoTrajectory, id)
	}
	return out, nil
}
